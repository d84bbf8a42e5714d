// The pi extension: pi's `session_before_compact` is answered with a compaction contextfold's engine
// planned (cut, file tracking, facts) and summarized (loss audit, extractive fallback), the summary
// asked of the session's model as the agent's own conversation; the `context` handler records each
// model call for that, and prunes old tool output before it when asked to.
import { CallPruner, cutWarning } from '../call-pruner.js'
import { compact } from '../compact.js'
import { isAbortError } from '../errors.js'
import { extractiveSummarizer } from '../summarizers/extractive.js'
import { telemetryFor } from '../telemetry.js'
import { usable, type Overhead, type PruneResult } from '../native.js'
import type { CompactOptions, CompactionResult, Summarizer } from '../types.js'
import { pruneContext, tokensBound } from './prune.js'
import { activeTools, LastRequests } from './request.js'
import { branchSession, headEntries, sessionOptions } from './session.js'
import { piModelSummarizer } from './summarizer.js'
import type {
  PiBeforeCompactEvent,
  PiBeforeCompactResult,
  PiCompactionDetails,
  PiContextEvent,
  PiExtensionAPI,
  PiExtensionContext,
  PiExtensionOptions,
  PiMessage,
  PiRequest,
} from './types.js'

type Json = Record<string, unknown>

function summarizerFor(options: PiExtensionOptions, ctx: PiExtensionContext, request: PiRequest | undefined): Summarizer {
  const s = options.summarizer ?? 'model'
  if (s === 'extractive') return extractiveSummarizer({ template: options.template ?? 'anchored' })
  if (s === 'model') return piModelSummarizer(ctx, options.complete, request)
  return s
}

/** Whether the session's model writes the summary as the agent's own conversation (then each call is recorded). */
function asConversation(options: PiExtensionOptions): boolean {
  return (options.summarizer ?? 'model') === 'model' && (options.summaryInput ?? 'conversation') === 'conversation'
}

/** The compaction entry's `details`: the file lists and what the next compaction carries over. */
function detailsOf(result: CompactionResult): PiCompactionDetails {
  const plan = result.plan!
  const part = (result.messages?.[0]?.parts.find((p) => p.type === 'compaction') ?? {}) as Json
  const files = { read: plan.readFiles, modified: plan.modifiedFiles }
  const summary = result.messages?.[1]
  const ours: PiCompactionDetails['contextfold'] = {
    version: 1,
    files,
    keep: Array.isArray(part.keep) ? part.keep : [],
    fallback: result.fallback,
    summarized: plan.summarizedIDs.length,
  }
  if (result.audit) ours.audit = result.audit
  if (result.reason) ours.reason = result.reason
  if (summary?.model) ours.model = summary.model
  if (result.tokensAfter !== undefined) ours.tokensAfter = result.tokensAfter
  if (summary?.tokens) ours.usage = summary.tokens
  return { readFiles: files.read, modifiedFiles: files.modified, contextfold: ours }
}

/** The pi session's id, as the spans' `gen_ai.conversation.id`. */
function conversation(ctx: PiExtensionContext): { conversationId?: string } {
  const id = ctx.sessionManager?.getSessionId?.()
  return id ? { conversationId: id } : {}
}

/**
 * What a compaction reads of `ctx`, read once as it starts: pi's print mode disposes the runtime
 * when the prompt returns, while the threshold compaction it started still runs, and from then on
 * every getter of `ctx` throws.
 */
function captured(ctx: PiExtensionContext): PiExtensionContext {
  const { model, modelRegistry, sessionManager, hasUI, ui } = ctx
  return { model, modelRegistry, sessionManager, hasUI, ui }
}

/**
 * Answers pi's `session_before_compact` with contextfold's compaction (see `createPiExtension`);
 * `requests` holds the agent's model calls the `context` handler recorded (for the conversation form).
 */
export async function beforeCompact(
  event: PiBeforeCompactEvent,
  live: PiExtensionContext,
  options: PiExtensionOptions = {},
  requests?: LastRequests,
  pruner?: CallPruner,
): Promise<PiBeforeCompactResult> {
  const ctx = captured(live)
  const { preparation, branchEntries, signal } = event
  const decline = (why: string): undefined => {
    options.onCompaction?.({ status: 'declined', why, ...(event.reason ? { reason: event.reason } : {}) })
    if (ctx.hasUI) ctx.ui?.notify?.(`contextfold: ${why}; pi compacts instead`, 'warning')
    return undefined
  }
  if (signal.aborted) return { cancel: true }
  const session = branchSession(branchEntries, sessionOptions(ctx.model, preparation.settings, options.compaction), pruner)
  // Results the model has not read that the tail could not keep are cut to fit it (as the calls
  // sent them, when a call cut them): the compaction then keeps them instead of summarizing them.
  const cut = session.cutUnread()
  if (cut.prunedPartIDs.length > 0) warnCut(cut, ctx, options)
  // The agent's last request, when the model is asked in the conversation form and the call was seen.
  const request = asConversation(options) ? await requests?.conversation(ctx, branchEntries) : undefined
  const form = options.summaryInput ?? (options.summarizer === undefined || options.summarizer === 'model' ? 'conversation' : 'transcript')
  const run: CompactOptions = {
    signal,
    autoContinue: false, // pi resumes (or not) by itself
    summarizer: summarizerFor(options, ctx, request),
    summaryInput: asConversation(options) && !request ? 'transcript' : form,
    fallback: options.fallback ?? true,
    audit: options.audit ?? true,
    overflow: event.reason === 'overflow',
    auto: event.reason !== undefined && event.reason !== 'manual',
    telemetry: telemetryFor(options.telemetry, { integration: 'pi', ...conversation(ctx) }),
  }
  // pi before 0.74 does not say why it compacts; a `/compact` with text is manual.
  if (event.reason === undefined) run.trigger = event.customInstructions?.trim() ? 'manual' : 'unknown'
  if (options.protectFirstTurns) run.protectFirstTurns = options.protectFirstTurns
  if (options.template) run.template = options.template
  if (options.instructions) run.instructions = options.instructions
  if (event.customInstructions?.trim()) run.focus = event.customInstructions.trim()
  const file = ctx.sessionManager?.getSessionFile?.()
  if (file) run.transcriptPath = file

  const context = session.context().map((m) => m.id)
  let result: CompactionResult
  try {
    result = await compact(session, run)
    // A failure that allows no fallback in compact() (auth, network, rate limit) left the session
    // unchanged: the summary is still written, offline, rather than leaving the context over the window.
    if (result.status === 'failed' && run.fallback !== false && !signal.aborted) {
      const first = result.reason
      result = await compact(session, { ...run, summarizer: extractiveSummarizer({ template: run.template ?? 'anchored' }) })
      if (result.status === 'compacted') result = { ...result, fallback: true, reason: `${first} (used the extractive summary)` }
    }
  } catch (e) {
    if (isAbortError(e) || signal.aborted) return { cancel: true }
    throw e
  }
  if (signal.aborted) return { cancel: true }
  if (result.status !== 'compacted' || !result.summary || !result.plan) return decline(result.reason ?? `compaction ${result.status}`)

  const tail = result.plan.tailStartID
  if (tail !== undefined && !branchEntries.some((e) => e.id === tail)) return decline(`the kept tail starts at ${tail}, which is no entry of the branch`)
  const details = detailsOf(result)
  const hidden = result.plan.hiddenFromID
  if (hidden !== undefined) details.contextfold.head = headEntries(branchEntries, context.slice(0, context.indexOf(hidden)))
  // No tail: everything is summarized. pi keeps nothing before the entry when the id matches none
  // (0.73), or defaults it to the compaction's own id (0.74+).
  const firstKeptEntryId = tail as string
  options.onCompaction?.({ status: 'compacted', details, summary: result.summary, firstKeptEntryId, ...(event.reason ? { reason: event.reason } : {}) })
  return { compaction: { summary: result.summary, firstKeptEntryId, tokensBefore: preparation.tokensBefore, details } }
}

/** The messages with the protected head of the latest compaction put back before its summary. */
function withProtectedHead(messages: readonly PiMessage[], ctx: PiExtensionContext): PiMessage[] | undefined {
  const branch = ctx.sessionManager?.getBranch?.() ?? []
  const latest = branch.findLast((e) => e.type === 'compaction')
  const head = (latest?.details as Partial<PiCompactionDetails> | undefined)?.contextfold?.head
  const at = messages.findIndex((m) => m.role === 'compactionSummary')
  if (!head?.length || at < 0) return undefined
  const byId = new Map(branch.map((e) => [e.id, e]))
  const restored = head.flatMap((id) => {
    const e = byId.get(id)
    return e?.type === 'message' && e.message ? [e.message as PiMessage] : []
  })
  return [...messages.slice(0, at), ...restored, ...messages.slice(at)]
}

/**
 * A pi extension (`(pi) => void`) routing pi's compaction through contextfold: the cut, the summary
 * input, the file tracking and the loss audit come from contextfold's engine, the summary from the
 * session's model (asked as the agent's own conversation: its last request unchanged, then the
 * instructions, so the provider reads it from its cache) or `options.summarizer`, the extractive
 * summary when that call fails. A manual
 * `/compact <text>` focuses the summary on the text; aborting the compaction leaves the session as
 * it was. With `prune`, old tool output is cleared before every model call; with
 * `protectFirstTurns`, the session's first turns are sent verbatim before the summary.
 */
export function createPiExtension(options: PiExtensionOptions = {}): (pi: PiExtensionAPI) => void {
  return (pi) => {
    const requests = asConversation(options) ? new LastRequests(pi, options.convertToLlm) : undefined
    const prune = typeof options.prune === 'object' ? options.prune : {}
    const { policy: settingsPolicy, ...rules } = prune
    const policy = typeof options.prune === 'string' ? options.prune : settingsPolicy
    // One pruner per pi session: what it cleared or cut stays so in that session's later calls.
    const pruners = new WeakMap<object, CallPruner>()
    let orphan: CallPruner | undefined
    const prunerOf = (ctx: PiExtensionContext): CallPruner => {
      const make = () => new CallPruner({ ...(policy ? { policy } : {}), telemetry: telemetryFor(options.telemetry, { integration: 'pi', ...conversation(ctx) }) })
      const key = ctx.sessionManager
      if (!key) return (orphan ??= make())
      let pruner = pruners.get(key)
      if (!pruner) pruners.set(key, (pruner = make()))
      return pruner
    }
    pi.on('session_before_compact', (event: PiBeforeCompactEvent, ctx: PiExtensionContext) => beforeCompact(event, ctx, options, requests, prunerOf(ctx)))
    // pi 0.74+ shows `context` handlers no system message: this later event has the whole request.
    if (requests) pi.on('context_with_system', (event: PiContextEvent, ctx: PiExtensionContext) => requests.record(ctx, event.messages, event.messages))
    pi.on('context', (event: PiContextEvent, ctx: PiExtensionContext) => {
      const withHead = options.prune || options.protectFirstTurns ? withProtectedHead(event.messages, ctx) : undefined
      const messages = withHead ?? event.messages
      const session = { ...sessionOptions(ctx.model, {}, { ...options.compaction, ...rules }), tokenizer: 'estimate' as const }
      const pruner = prunerOf(ctx)
      // What the call carries besides the messages counts toward the window.
      const system = ctx.getSystemPrompt?.()
      const tools = activeTools(pi)
      const overhead: Overhead = { ...(system ? { system } : {}), ...(tools ? { tools } : {}) }
      // Without pruning, the messages are read only when the call may be over the window, or to
      // send what an earlier call cut.
      const room = usable({ model: session.model, cfg: session.compaction ?? {} })
      const read = options.prune || pruner.clearing || (room > 0 && tokensBound(messages, overhead) > room)
      const pruned = read ? pruneContext(messages, pruner, session, { clear: !!options.prune, overhead }) : undefined
      if (pruned?.cut) warnCut(pruned.cut, ctx, options)
      const out = pruned ?? (withHead ? { messages: withHead } : undefined)
      requests?.record(ctx, event.messages, out?.messages ?? event.messages)
      return out
    })
  }
}

/** Says that a call cut outputs the model had not read to fit the window (`onWarning`, pi's UI). */
function warnCut(cut: PruneResult, ctx: PiExtensionContext, options: PiExtensionOptions): void {
  const message = cutWarning(cut)
  options.onWarning?.({ message })
  if (ctx.hasUI) ctx.ui?.notify?.(`contextfold: ${message}`, 'warning')
}
