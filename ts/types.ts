// Public types of the TypeScript layer.
import type { Audit, CompactionPlan, Message, ModelMessageLike, PrepareOptions, Session, TokenizerName, Usage } from './native.js'
import type { ContextfoldError } from './errors.js'
import type { CompactionTrigger, TelemetryOptions } from './telemetry.js'

import type { TemplateName } from './templates.js'

export type { TemplateName }

/**
 * How the summary request is sent. `conversation`: the agent's own last request (its messages
 * unchanged, with its system prompt and tools), then one user message with the instructions, so
 * a provider that caches the prompt prefix reads that input from its cache. `transcript`: a
 * summarizer system prompt and one user message holding the history as a transcript.
 */
export type SummaryInputForm = 'conversation' | 'transcript'

/** What the agent sent besides its messages: sent unchanged with the conversation form (the cache prefix is tools, system, messages). */
export interface RequestSettings {
  /** The agent's system prompt, when it is not a message of `messages`. */
  system?: string
  /** The agent's tool definitions, in the shape its client takes (an AI SDK tool set, OpenAI `tools`...). */
  tools?: unknown
  /** The agent's tool choice (changing it invalidates Anthropic's cached messages: it is sent as it was). */
  toolChoice?: unknown
  /** The agent's provider options (thinking settings are part of the cache key). */
  providerOptions?: Record<string, unknown>
}

/** The agent's last model request: its messages as the model got them, and what came with them. */
export interface LastRequest extends RequestSettings {
  messages: readonly ModelMessageLike[]
}

/** What a summarizer is asked. */
export interface SummaryRequest {
  /** The transcript form's system prompt. */
  system: string
  /** The transcript form's user message: the history as a transcript, then the instructions. */
  prompt: string
  /**
   * The conversation form (`input: 'conversation'`): the agent's last request's messages, first
   * and unchanged, then those that arrived since and are summarized (tool outputs cut; those that
   * stay verbatim after the summary are left out), then one user message with the instructions
   * (what to summarize, what stays verbatim, the template). Send it with `request` (the agent's system prompt, tools, tool
   * choice). Built when first read. The messages are as the agent's model read them, secrets
   * included (redacting them would change the prefix): only the transcript form is redacted, and
   * only it is given to a summarizer in the transcript form.
   */
  messages?: ModelMessageLike[]
  /**
   * With `messages`: how many of its leading messages the provider already read, unchanged, in the
   * agent's last request. A cache breakpoint belongs on the last of them: what follows (summarized
   * messages that arrived since, the instructions) is read once, so writing it to the cache (1.25× or 2× the
   * input price on Anthropic) buys nothing. Built with `messages`.
   */
  cachedMessages?: number
  /** What the agent's last request sent besides its messages, with the conversation form. */
  request?: RequestSettings
  /** The form the built-in LLM summarizers send (`compact()`'s `summaryInput`; default `transcript`). */
  input?: SummaryInputForm
  /** The session's tokenizer, for summarizers that measure their own output (extractive). */
  tokenizer?: TokenizerName
  /** The summary's output budget (`plan.summaryBudget`; half of it for a turn-prefix summary). */
  maxOutputTokens: number
  /** `summary`: the history (and previous summary); `turn-prefix`: the beginning of a turn cut by the tail. */
  kind?: 'summary' | 'turn-prefix'
  /** What is being summarized, for summarizers that work from the plan instead of the prompt (extractive). */
  plan?: CompactionPlan
  template?: TemplateName
}

export interface SummaryResponse {
  text: string
  /** `stop`, `length` (cut off: rejected), `error` (rejected), ... as the provider says. */
  finishReason?: string
  usage?: Usage
  /** The model that wrote the summary, recorded on the summary message. */
  model?: { providerID: string; modelID: string }
}

/** Writes a summary. Throw (or reject) on failure; `compact()` classifies the error. */
export type Summarizer = (req: SummaryRequest, signal?: AbortSignal) => Promise<SummaryResponse>

export interface BeforeCompactContext {
  session: Session
  plan: CompactionPlan
  template: TemplateName
  /** The default system prompt of the summary call. */
  system: string
  /** The default prompt of the summary call (the whole transcript included). */
  prompt: string
  auto: boolean
  overflow: boolean
  signal?: AbortSignal
}

/** What `beforeCompact` may return; nothing (or `undefined`) goes on as planned. */
export interface BeforeCompactResult {
  /** Skip this compaction: `true`, or the reason reported in the result. */
  cancel?: boolean | string
  /** Text appended to the prompt (e.g. project notes the summary must keep). */
  context?: string | string[]
  /**
   * Replaces the prompt; the conversation is appended after it, so the summary still sees it. In
   * the conversation form it replaces the instructions (what stays verbatim is still said).
   */
  prompt?: string
  /** Replaces the system prompt of the transcript form (the conversation form keeps the agent's). */
  system?: string
}

export interface CompactHooks {
  /** Runs after the plan is made and before the summarizer is called. */
  beforeCompact?: (ctx: BeforeCompactContext) => void | BeforeCompactResult | Promise<void | BeforeCompactResult>
  /** Runs with every result (compacted, skipped, failed); not when the compaction is aborted. */
  afterCompact?: (result: CompactionResult, ctx: { session: Session; plan?: CompactionPlan }) => void | Promise<void>
}

/** Where to cut (`PrepareOptions`), how to summarize, and what to append after the summary. */
export interface CompactOptions extends PrepareOptions {
  /** Writes the summary; default: the offline `extractiveSummarizer()`. */
  summarizer?: Summarizer
  /** Aborting rejects with an `AbortError` (`code: 'CF_ABORTED'`) and leaves the session as it was. */
  signal?: AbortSignal
  /** What the summary should concentrate on (`/compact <focus>`). */
  focus?: string
  /** Extra instructions for the summarizer. */
  instructions?: string
  /** Default `anchored`. */
  template?: TemplateName
  hooks?: CompactHooks
  /** Use the extractive summary when the summarizer fails or answers badly (default true). */
  fallback?: boolean
  /**
   * The summary request's form (`SummaryRequest.input`): `conversation` sends the agent's own last
   * request plus one instruction message, so its input is read from the provider's prompt cache
   * when the summarizer is the agent's model; `transcript` (default) sends a transcript to a
   * summarizer of its own. An answer to the conversation form that is too long or unusable is
   * asked again in the transcript form.
   */
  summaryInput?: SummaryInputForm
  /**
   * The agent's last model request (its messages exactly as sent, system prompt, tools), the
   * prefix of the conversation form. Default: `session.toModelMessages()` with no system or tools.
   */
  lastRequest?: LastRequest
  /**
   * Append opencode's synthetic "Continue if you have next steps..." user message after the
   * summary (default true; pass false for a manual `/compact` that should not resume the agent).
   */
  autoContinue?: boolean
  /** Where the full session is stored: the summary tells the model it can read details there. */
  transcriptPath?: string
  /**
   * Overflow replay: the id of the user message the provider rejected. It is left out of the
   * summary, hidden, and re-created after the summary with new ids (images and PDFs become
   * `[Attached <mime>: <filename>]`), instead of the continue message. Implies `overflow`.
   */
  replay?: string
  /**
   * The loss audit (default true): after the summarizer answers, the facts of `plan.keep` that
   * neither the summary nor the kept messages hold are restored verbatim in a "## Preserved"
   * section. With `false`, only the latest request is restored (it is always in the context).
   */
  audit?: boolean
  /**
   * OpenTelemetry: a `contextfold.compact` span for the compaction, a `contextfold.summarize` span
   * for each summary call under it (see `TelemetryOptions`; docs/guides/telemetry.md). On by
   * default, recorded only when the app registered a tracer provider; `false`: none.
   */
  telemetry?: boolean | TelemetryOptions
  /**
   * Why this compaction runs, as its span says (`contextfold.trigger`). Default: `overflow` with
   * `overflow` or `replay`, `threshold` with `auto`, else `manual`.
   */
  trigger?: CompactionTrigger
}

/** What every `CompactionResult` says, whatever its `status`. */
interface CompactionResultBase {
  /** The summary is the extractive fallback (the summarizer failed or answered badly). */
  fallback: boolean
  /** Why it was skipped, failed, or fell back. */
  reason?: string
  tokensBefore: number
  /** The error behind a `failed` status or a fallback. */
  error?: ContextfoldError
  /** The plan the compaction followed (absent when there was nothing to summarize). */
  plan?: CompactionPlan
  /** What the loss audit found: facts kept, restored in the Preserved section, dropped by its budget (with the reason). */
  audit?: Omit<Audit, 'section'>
}

/** A compaction that was applied: the summary and the messages it appended. */
export interface CompactedResult extends CompactionResultBase {
  status: 'compacted'
  /** The summary text as stored (framed, with the file lists). */
  summary: string
  tokensAfter: number
  /** What was appended, in order: the request, the summary, then the continue or replayed message. */
  messages: Message[]
  plan: CompactionPlan
  audit: Omit<Audit, 'section'>
  code?: undefined
}

/** What only an applied compaction has, absent otherwise (so `result.summary` reads on any result). */
interface NotApplied {
  summary?: undefined
  tokensAfter?: undefined
  messages?: undefined
}

/** A compaction not applied: nothing to summarize, one already running, or one that would not shrink the context. */
export interface SkippedResult extends CompactionResultBase, NotApplied {
  status: 'skipped'
  reason: string
  /** Why, when a code says it: `CF_NOT_SMALLER` (it would not shrink the context). */
  code?: 'CF_NOT_SMALLER'
}

/** A summary call that failed in a way no fallback covers (auth, network...): the session is unchanged. */
export interface FailedResult extends CompactionResultBase, NotApplied {
  status: 'failed'
  reason: string
  error: ContextfoldError
  plan: CompactionPlan
  code?: undefined
}

/** What `compact()` did, told apart by `status`. */
export type CompactionResult = CompactedResult | SkippedResult | FailedResult
