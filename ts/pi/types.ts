// The parts of pi's extension API this integration uses, typed structurally: contextfold's typings
// need no pi package, and the same types fit `@mariozechner/pi-coding-agent` (0.73) and
// `@earendil-works/pi-coding-agent` (0.74+).
import type { CompactionConfig, PrunePolicy, Usage } from '../native.js'
import type { TelemetryOptions } from '../telemetry.js'
import type { Summarizer, SummaryInputForm, TemplateName } from '../types.js'

/** A pi message (`AgentMessage`): user, assistant, toolResult, bashExecution, custom, summaries. */
export interface PiMessage {
  role: string
  [key: string]: unknown
}

/** A pi session entry (`SessionEntry`): a line of the session file. */
export interface PiEntry {
  type: string
  id: string
  parentId?: string | null
  [key: string]: unknown
}

/** A pi-ai `Model`. */
export interface PiModel {
  provider: string
  id: string
  api?: string
  contextWindow?: number
  maxTokens?: number
  reasoning?: boolean
  /** USD per million tokens. */
  cost?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number }
  [key: string]: unknown
}

/** A pi-ai `AssistantMessage` (what a completion returns). */
export interface PiAssistantMessage {
  role: 'assistant'
  content: Array<{ type: string; text?: string; [key: string]: unknown }>
  stopReason?: string
  errorMessage?: string
  usage?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number; totalTokens?: number }
  [key: string]: unknown
}

/** A tool as the model reads it (pi-ai's `Tool`). */
export interface PiTool {
  name: string
  description?: string
  parameters?: unknown
}

/** A pi-ai `Context` for one completion: pi-ai messages (pi 0.74+: the system prompt and tools in a leading system message). */
export interface PiContext {
  systemPrompt?: string
  messages: PiMessage[]
  tools?: PiTool[]
}

/** The agent's last model request: its context and the call settings that are part of the provider's cache key. */
export interface PiRequest {
  context: PiContext
  /** `sessionId`, `reasoning` as pi sent them. */
  options: Record<string, unknown>
}

/** pi's `convertToLlm`: the agent's messages as pi-ai messages (summaries and shell runs become user messages). */
export type PiConvertToLlm = (messages: PiMessage[]) => PiMessage[] | Promise<PiMessage[]>

/** pi-ai's `complete` / `completeSimple`: `(model, context, options) => Promise<AssistantMessage>`. */
export type PiComplete = (model: never, context: PiContext, options?: Record<string, unknown>) => Promise<PiAssistantMessage>

/** pi's `ModelRegistry`, as far as a summary call needs it (0.73: auth lookup; 0.87: `streamSimple`). */
export interface PiModelRegistry {
  getApiKeyAndHeaders?(model: never): Promise<{ ok: boolean; apiKey?: string; headers?: Record<string, string>; error?: string }>
  getApiKey?(model: never): Promise<string | undefined>
  streamSimple?(model: never, context: PiContext, options?: Record<string, unknown>): { result(): Promise<PiAssistantMessage> }
}

/** The `ctx` pi passes to an extension's event handlers. */
export interface PiExtensionContext {
  model?: PiModel | undefined
  modelRegistry?: PiModelRegistry
  sessionManager?: { getSessionFile?(): string | undefined; getSessionId?(): string; getBranch?(): PiEntry[] }
  /** The agent's effective system prompt. */
  getSystemPrompt?(): string
  hasUI?: boolean
  ui?: { notify?(message: string, level?: 'info' | 'warning' | 'error'): void }
}

/** pi's compaction settings (`compaction` in settings.json). */
export interface PiCompactionSettings {
  enabled?: boolean
  reserveTokens: number
  keepRecentTokens: number
}

/** pi's `session_before_compact` event (0.87 adds `reason` and `willRetry`). */
export interface PiBeforeCompactEvent {
  type: 'session_before_compact'
  preparation: {
    firstKeptEntryId: string
    tokensBefore: number
    previousSummary?: string
    settings: PiCompactionSettings
    [key: string]: unknown
  }
  branchEntries: PiEntry[]
  customInstructions?: string
  signal: AbortSignal
  reason?: 'manual' | 'threshold' | 'overflow'
  willRetry?: boolean
}

/** What a `session_before_compact` handler returns: pi summarizes (`undefined`), is cancelled, or stores this. */
export type PiBeforeCompactResult =
  | undefined
  | { cancel: true }
  | { compaction: { summary: string; firstKeptEntryId: string; tokensBefore: number; details: PiCompactionDetails } }

/**
 * pi's `context` event: the messages of the next model call, which a handler may replace; pi 0.74+
 * leaves its system messages out of it, and shows the whole request in `context_with_system` next.
 */
export interface PiContextEvent {
  type: 'context' | 'context_with_system'
  messages: PiMessage[]
}

/** pi's `ExtensionAPI`, as far as this extension uses it. */
export interface PiExtensionAPI {
  // pi's `on` is one overload per event: only `any` parameters let every pi version's API fit here.
  on(event: string, handler: (event: any, ctx: any) => unknown): void // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The active tools' names and every tool's definition (what pi 0.73 sends beside the messages). */
  getActiveTools?(): string[]
  getAllTools?(): PiTool[]
  getThinkingLevel?(): string
}

/** What contextfold stores in a compaction entry's `details` (read back by the next compaction). */
export interface PiCompactionDetails {
  /** pi's own names for the file lists (cumulative). */
  readFiles: string[]
  modifiedFiles: string[]
  contextfold: {
    version: 1
    /** The file lists as contextfold carries them over. */
    files: { read: string[]; modified: string[] }
    /** The facts the next summary must keep (the loss audit's input). */
    keep: unknown[]
    /** What the loss audit found: facts kept, restored verbatim, dropped. */
    audit?: unknown
    /** The summary is the extractive one (the model call failed or answered badly). */
    fallback: boolean
    /** Why the summary fell back. */
    reason?: string
    /** The model that wrote the summary. */
    model?: { providerID: string; modelID: string }
    /** The protected head (`protectFirstTurns`): entries sent verbatim before the summary. */
    head?: string[]
    /** Messages the summary replaces, and contextfold's count of the context after it. */
    summarized: number
    tokensAfter?: number
    /** The summary call's usage as the provider reported it (cache reads included). */
    usage?: Usage
  }
}

/** Options of `createPiExtension`. */
export interface PiExtensionOptions {
  /**
   * Who writes the summary: `'model'` (default) is the session's model through pi-ai, `'extractive'`
   * is contextfold's offline summary, or any contextfold `Summarizer`.
   */
  summarizer?: 'model' | 'extractive' | Summarizer
  /**
   * pi-ai's `complete` (or `completeSimple`), for pi versions whose model registry cannot stream
   * (0.73). Default: `@mariozechner/pi-ai`, which pi's extension loader resolves to its own copy.
   */
  complete?: PiComplete
  /**
   * How the session's model is asked for the summary (`summarizer: 'model'`): `'conversation'`
   * (default) sends the agent's last request again, its messages unchanged (with its system
   * prompt, tools, session id and thinking level), then what followed and one message with the
   * instructions, so the provider reads that input from its prompt cache; `'transcript'` sends
   * contextfold's summary prompt with the history as a transcript. An overflow compaction, or a
   * session whose last request the extension did not see, is asked as a transcript. With a
   * `Summarizer` of your own this is `compact()`'s `summaryInput` (default `'transcript'`).
   */
  summaryInput?: SummaryInputForm
  /**
   * pi's `convertToLlm` (the agent's messages as the model gets them), for the conversation form.
   * Default: contextfold's copy of it (as pi 0.73 to 0.87 convert); pass pi's own
   * (`import { convertToLlm } from '@mariozechner/pi-coding-agent'`) when it changes.
   */
  convertToLlm?: PiConvertToLlm
  /** Use contextfold's extractive summary when the summary call fails (default true). */
  fallback?: boolean
  /** The loss audit: facts the summary lost are restored verbatim (default true). */
  audit?: boolean
  /** Summary template (default `anchored`, pi's own sections). */
  template?: TemplateName
  /** Extra instructions for every summary (a manual `/compact <text>` adds its own focus). */
  instructions?: string
  /**
   * Clear old tool output in what model calls send (the `context` event; pi's session keeps it), with
   * contextfold's prune rules: `true` for its defaults, a policy name, or the prune settings with an
   * optional `policy`. The policy (default `'cache'`) says when more is cleared: where it pays for
   * the provider cache it breaks, or right after a compaction; `'opencode'` in every call. What was
   * cleared stays cleared in later calls, so the prompt's prefix stays cached. Default off.
   */
  prune?: boolean | PrunePolicy | PiPruneSettings
  /**
   * The session's first turns are never summarized: they are sent verbatim before the summary
   * (the `context` event puts them back; default 0).
   */
  protectFirstTurns?: number
  /** More compaction settings (tail size, tool output limits...): pi's `keepRecentTokens` and `reserveTokens` are the defaults. */
  compaction?: CompactionConfig
  /** Called after each compaction contextfold made, or declined (then pi's own runs). */
  onCompaction?: (event: PiCompactionEvent) => void
  /**
   * Called when tool outputs the model had not read yet did not fit the window and were cut to fit
   * (head and tail kept, a marker saying how much was left out); pi's UI shows it too.
   */
  onWarning?: (event: { message: string }) => void
  /**
   * OpenTelemetry: a `contextfold.compact` span per compaction (its summary calls under it) and a
   * `contextfold.prune` event per prune, with the pi session's id as `gen_ai.conversation.id`.
   * On by default, recorded only when the app registered a tracer provider; `false`: none.
   */
  telemetry?: boolean | TelemetryOptions
}

/** The prune rules of the `context` event, and when to clear more. */
export type PiPruneSettings = Pick<CompactionConfig, 'pruneProtect' | 'pruneMinimum' | 'protectedTools' | 'pruneDuplicates' | 'pruneRereads' | 'pruneStaleReads'> & {
  policy?: PrunePolicy
}

/** What `onCompaction` receives. */
export interface PiCompactionEvent {
  status: 'compacted' | 'declined'
  reason?: 'manual' | 'threshold' | 'overflow'
  /** For `declined`: why contextfold let pi compact. */
  why?: string
  details?: PiCompactionDetails
  summary?: string
  firstKeptEntryId?: string
}
