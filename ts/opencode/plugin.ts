// The opencode plugin: prune and truncate old tool output before every model call, give opencode's
// compaction call contextfold's facts, and stop the compact → continue → compact loop.
import type { Hooks, Plugin, PluginInput, PluginOptions } from '@opencode-ai/plugin'
import { Session, type ModelInfo, type PrunePolicy } from '../native.js'
import { CallPruner, cutWarning } from '../call-pruner.js'
import { MAX_INEFFECTIVE } from '../auto-compactor.js'
import { startCompaction, telemetryFor, type CompactionOutcome, type CompactionSpan, type CompactionTrigger, type TelemetryOptions } from '../telemetry.js'
import { thrashReason } from './breaker.js'
import { sessionFacts, type SessionFacts } from './facts.js'
import { isCompactionRequest, toMessages, type OpencodeMessage } from './messages.js'
import { DEFAULT_PRUNE, foldToolOutputs, type PruneOptions } from './transform.js'

/** Options of `createOpencodePlugin` (and of `ContextfoldPlugin`, when opencode passes options). */
export interface OpencodePluginOptions {
  /**
   * contextfold's prune settings for the messages of every model call (opencode's age rule:
   * `pruneProtect` 40000, `pruneMinimum` 20000, scaled down in a window under 200k; plus
   * duplicates, re-reads and stale reads by default). `false`: no pruning.
   */
  prune?: PruneOptions | false
  /**
   * When a call clears more old output (default `'cache'`: where it pays for the provider cache it
   * breaks, judged with the model's window and prices, or right after a compaction; `'opencode'`:
   * in every call). What was cleared stays cleared in the session's later calls either way.
   */
  prunePolicy?: PrunePolicy
  /** Old tool outputs longer than this many characters keep their head and tail (default 20000); `false`: off. */
  toolOutputMaxChars?: number | false
  /** Add contextfold's facts to opencode's compaction prompt (default true). */
  facts?: boolean
  /**
   * Compactions in a row that leave the context over the limit before auto-continue is turned off
   * (default 2, the AutoCompactor's `maxIneffective`).
   */
  maxIneffective?: number
  /**
   * OpenTelemetry: a `contextfold.compact` span for each of opencode's compactions (from the
   * compaction's start to its summary: tokens before and after, the facts given and how many of
   * them the summary kept) and a `contextfold.prune` span for each call that clears more, with the
   * opencode session's id as `gen_ai.conversation.id`. On by default, recorded only when a tracer
   * provider is registered in opencode's process; `false`: none.
   */
  telemetry?: boolean | TelemetryOptions
}

/** The environment variable that turns the plugin off: `CONTEXTFOLD_OPENCODE=off`. */
export const OFF_SWITCH = 'CONTEXTFOLD_OPENCODE'

const DEFAULT_TOOL_OUTPUT_MAX_CHARS = 20_000

/** Sessions whose pruner and model the plugin keeps. */
const MAX_SESSIONS = 100

/** What the plugin reads of opencode's `Model`. */
interface OpencodeModel {
  id: string
  providerID: string
  limit?: { context?: number; output?: number }
  cost?: { input?: number; output?: number; cache?: { read?: number; write?: number } }
}

/** opencode's model as contextfold's `ModelInfo` (window and prices per million tokens). */
function modelInfo(m: OpencodeModel): ModelInfo {
  const info: ModelInfo = { providerID: m.providerID, modelID: m.id, limit: { context: m.limit?.context ?? 0 } }
  if (m.limit?.output) info.limit.output = m.limit.output
  const c = m.cost
  if (c && typeof c.input === 'number' && c.input > 0 && typeof c.output === 'number') {
    info.cost = { input: c.input, output: c.output }
    if (c.cache?.read) info.cost.cacheRead = c.cache.read
    if (c.cache?.write) info.cost.cacheWrite = c.cache.write
  }
  return info
}

type Level = 'debug' | 'info' | 'warn' | 'error'

/** A compaction of opencode's that is running: its span, and the facts its summary is audited against. */
interface Running {
  span: CompactionSpan
  facts: SessionFacts | undefined
}

/** Why opencode compacts: its compaction request says `overflow` (the provider rejected the call) and `auto`. */
function triggerOf(messages: readonly OpencodeMessage[] | undefined): CompactionTrigger {
  const part = messages?.findLast(isCompactionRequest)?.parts.find((p) => p.type === 'compaction') as { auto?: unknown; overflow?: unknown } | undefined
  if (!part) return 'unknown'
  if (part.overflow === true) return 'overflow'
  return part.auto === true ? 'threshold' : 'manual'
}

/**
 * What opencode's compaction did, read from the session after it: the summary message (its error,
 * its usage), the context's size now, and the facts the summary kept (opencode restores none).
 */
function outcomeOf(messages: readonly OpencodeMessage[], running: Running, model: ModelInfo | undefined): CompactionOutcome {
  const at = messages.findLastIndex(isCompactionRequest)
  const summary = messages.slice(at + 1).find((m) => m.info.role === 'assistant' && m.info.summary === true)
  const info = summary?.info.role === 'assistant' ? summary.info : undefined
  if (!summary || !info || info.error) {
    const error = info?.error as { name?: string; data?: { message?: string } } | undefined
    return { status: 'failed', reason: error ? `${error.name ?? 'error'}: ${error.data?.message ?? ''}` : 'opencode wrote no summary' }
  }
  const out: CompactionOutcome = {
    status: 'compacted',
    fallback: false,
    tokensAfter: Session.fromMessages(toMessages(messages), { model: model ?? { limit: { context: 0 } }, tokenizer: 'estimate' }).usage().tokens,
    usage: { input: info.tokens.input, output: info.tokens.output, reasoning: info.tokens.reasoning, cacheRead: info.tokens.cache.read, cacheWrite: info.tokens.cache.write },
  }
  const { facts } = running
  if (facts?.plan) {
    const text = summary.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n\n')
    const audit = facts.session.auditCompaction(facts.plan, text)
    out.audit = { kept: audit.kept.length, restored: 0, dropped: audit.restored.length + audit.dropped.length }
  }
  return out
}

/**
 * An opencode `Plugin` with these options. Put it in `.opencode/plugins/` as an export of its own
 * (`export const Contextfold = createOpencodePlugin({ ... })`): opencode calls every exported function.
 */
export function createOpencodePlugin(options: OpencodePluginOptions = {}): Plugin {
  return async (input: PluginInput): Promise<Hooks> => {
    // opencode's log (its log file; stderr with --print-logs). A failed log must not fail the model call.
    const log = (level: Level, message: string, extra?: Record<string, unknown>): Promise<void> =>
      input.client.app.log({ body: { service: 'contextfold', level, message, ...(extra ? { extra } : {}) } }).then(
        () => {},
        () => {},
      )
    if (process.env[OFF_SWITCH] === 'off') {
      await log('info', `contextfold: off (${OFF_SWITCH}=off)`)
      return {}
    }
    const fold = {
      prune: options.prune === false ? (false as const) : { ...DEFAULT_PRUNE, ...options.prune },
      toolOutputMaxChars: options.toolOutputMaxChars ?? DEFAULT_TOOL_OUTPUT_MAX_CHARS,
    }
    const maxIneffective = options.maxIneffective ?? MAX_INEFFECTIVE

    // An error of the plugin is logged and leaves opencode's call as it was: it never stops the agent.
    const guarded =
      <A extends unknown[]>(hook: string, fn: (...args: A) => Promise<void>) =>
      async (...args: A): Promise<void> => {
        try {
          await fn(...args)
        } catch (e) {
          await log('error', `contextfold: ${hook} failed, left as it was: ${e instanceof Error ? e.message : String(e)}`)
        }
      }

    const history = async (sessionID: string): Promise<OpencodeMessage[] | undefined> => {
      const res = await input.client.session.messages({ path: { id: sessionID } }).catch((e: unknown) => ({ error: e, data: undefined }))
      if (!res.data) await log('warn', `contextfold: could not read session ${sessionID}: ${String(res.error)}`)
      return res.data
    }

    // Per session: the model its calls go to (from the system transform), its pruner, its telemetry
    // and the compaction running.
    const sessions = new Map<string, { model?: ModelInfo; system?: string[]; pruner: CallPruner; telemetry: ReturnType<typeof telemetryFor>; compaction?: Running }>()
    const sessionState = (id: string) => {
      let s = sessions.get(id)
      if (!s) {
        const telemetry = telemetryFor(options.telemetry, { integration: 'opencode', conversationId: id })
        sessions.set(id, (s = { pruner: new CallPruner({ policy: options.prunePolicy ?? 'cache', telemetry }), telemetry }))
        // opencode serve runs many sessions: the oldest are forgotten first.
        if (sessions.size > MAX_SESSIONS) sessions.delete(sessions.keys().next().value!)
      }
      return s
    }

    /** Ends the span of the session's running compaction with what `messages` (read after it) say. */
    const finish = (sessionID: string, messages: readonly OpencodeMessage[]) => {
      const state = sessions.get(sessionID)
      const running = state?.compaction
      if (!state || !running) return
      delete state.compaction
      running.span.end(outcomeOf(messages, running, state.model))
    }

    return {
      event: guarded('event', async ({ event }: Parameters<NonNullable<Hooks['event']>>[0]) => {
        // A manual compaction gets no autocontinue; one whose summary failed ends with the session's turn.
        if (event.type !== 'session.compacted' && event.type !== 'session.idle' && event.type !== 'session.error') return
        const id = event.properties.sessionID
        if (!id || !sessions.get(id)?.compaction) return
        const messages = await history(id)
        if (messages) finish(id, messages)
      }),
      'experimental.chat.system.transform': guarded('system', async (input: { sessionID?: string; model: OpencodeModel }, output: { system: string[] }) => {
        if (!input.sessionID) return
        const state = sessionState(input.sessionID)
        state.model = modelInfo(input.model)
        // The system prompt counts toward the window of the call's messages (the transform that follows).
        state.system = output.system
      }),
      'experimental.chat.messages.transform': guarded('transform', async (_input: {}, output: { messages: OpencodeMessage[] }) => {
        const id = output.messages[0]?.info.sessionID
        const state = id ? sessionState(id) : undefined
        const { cut, ...r } = foldToolOutputs(output.messages, {
          ...fold,
          ...(state ? { pruner: state.pruner } : {}),
          ...(state?.model ? { model: state.model } : {}),
          ...(state?.system ? { overhead: { system: state.system } } : {}),
        })
        if (r.added > 0 || r.truncated > 0) {
          void log('info', `contextfold: cleared ${r.added} more old tool outputs (${r.tokensFreed} tokens; ${r.pruned} in all), cut ${r.truncated} long ones`, { ...r })
        }
        if (cut) void log('warn', `contextfold: ${cutWarning(cut)}`)
      }),
      'experimental.session.compacting': guarded('compacting', async ({ sessionID }: { sessionID: string }, output: { context: string[] }) => {
        const state = sessionState(sessionID)
        state.compaction?.span.end({ status: 'failed', reason: 'another compaction started before it ended' })
        delete state.compaction
        if (options.facts === false && state.telemetry === false) return
        const messages = await history(sessionID)
        const facts = messages && sessionFacts(messages)
        if (facts?.text && options.facts !== false) output.context.push(facts.text)
        const given = options.facts === false ? 0 : (facts?.count ?? 0)
        const span = startCompaction(state.telemetry, { trigger: triggerOf(messages), tokensBefore: facts?.session.usage().tokens, facts: given })
        // Ended when the summary is written: in `autocontinue` (automatic compactions), else on `session.compacted`.
        if (span) state.compaction = { span, facts }
      }),
      'experimental.compaction.autocontinue': guarded('autocontinue', async ({ sessionID }: { sessionID: string }, output: { enabled: boolean }) => {
        const messages = await history(sessionID)
        if (messages) finish(sessionID, messages)
        const reason = messages && thrashReason(messages, maxIneffective)
        if (!reason) return
        output.enabled = false
        // Awaited: `opencode run` may exit right after this compaction.
        await log('warn', reason)
      }),
    }
  }
}

/**
 * The plugin with its defaults (or with the options opencode passes it). A file in
 * `.opencode/plugins/` with `export { ContextfoldPlugin } from 'contextfold/opencode'` is the whole
 * setup; `CONTEXTFOLD_OPENCODE=off` turns it off.
 */
export const ContextfoldPlugin: Plugin = (input: PluginInput, options?: PluginOptions) =>
  createOpencodePlugin((options ?? {}) as OpencodePluginOptions)(input)
