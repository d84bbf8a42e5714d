// OpenTelemetry for compactions and prunes, through the app's `@opentelemetry/api` (an optional peer,
// required on first use, never by `import 'contextfold'`): a `contextfold.compact` span per compaction,
// a `contextfold.summarize` span per summary call under it (an AI SDK summarizer's own spans nest under
// that), and a `contextfold.prune` event per prune. The API is a no-op until the app registers a tracer
// provider, so this is on by default; without the package, or with `telemetry: false`, nothing runs.
// The integrations reach it through `telemetryFor` (compact(), AutoCompactor and CallPruner take the
// result) and, for a host that runs its own compaction (opencode), `startCompaction`.
import { createRequire } from 'node:module'

import type { Usage } from './native.js'
import type { CompactionResult } from './types.js'

/** An attribute value as OpenTelemetry takes it. */
export type AttributeValue = string | number | boolean | string[] | number[] | boolean[]

/** The part of an OpenTelemetry `Span` contextfold uses (a real `Span` is one). */
export interface SpanLike {
  setAttributes(attributes: Record<string, AttributeValue>): unknown
  addEvent(name: string, attributes?: Record<string, AttributeValue>): unknown
  setStatus(status: { code: number; message?: string }): unknown
  recordException(exception: Error | string): unknown
  end(): void
}

/** The part of an OpenTelemetry `Tracer` contextfold uses (a real `Tracer` is one). */
export interface TracerLike {
  startSpan(name: string, options?: { attributes?: Record<string, AttributeValue> }, context?: unknown): SpanLike
}

/**
 * OpenTelemetry settings (`telemetry` of `compact()`, `AutoCompactor` and every integration). On by
 * default: spans go to the tracer provider the app registered (none registered, or
 * `@opentelemetry/api` not installed: nothing is recorded). `false` (or `enabled: false`) turns
 * them off. Spans carry counts, ids and reasons, never message text.
 */
export interface TelemetryOptions {
  /** Default true. */
  enabled?: boolean
  /** The tracer to use instead of the registered provider's `contextfold` tracer (as the AI SDK's `experimental_telemetry.tracer`). */
  tracer?: TracerLike
  /** Attributes put on every span and event, e.g. `{ 'gen_ai.conversation.id': id }` (the integrations set that one themselves). */
  attributes?: Record<string, AttributeValue>
}

export type Telemetry = boolean | TelemetryOptions

/**
 * Why a compaction runs. `overflow`: the provider rejected the request as too long; `threshold`:
 * automatic, the context reached the compaction threshold (the usable window, `compactAt`, an
 * integration's `trigger` or `shouldCompact`); `manual`: asked for (`/compact`); `unknown`: the
 * host did not say (pi before 0.74).
 */
export type CompactionTrigger = 'overflow' | 'threshold' | 'manual' | 'unknown'

/** The names contextfold writes; `gen_ai.*` are the OpenTelemetry GenAI semantic conventions'. */
const ATTR = {
  conversationId: 'gen_ai.conversation.id',
  compacted: 'gen_ai.conversation.compacted',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheWriteTokens: 'gen_ai.usage.cache_creation.input_tokens',
  maxTokens: 'gen_ai.request.max_tokens',
  responseModel: 'gen_ai.response.model',
  finishReasons: 'gen_ai.response.finish_reasons',
  integration: 'contextfold.integration',
  trigger: 'contextfold.trigger',
  status: 'contextfold.status',
  reason: 'contextfold.reason',
  tokensBefore: 'contextfold.tokens.before',
  tokensAfter: 'contextfold.tokens.after',
  summarized: 'contextfold.messages.summarized',
  fallback: 'contextfold.fallback',
  fallbackReason: 'contextfold.fallback.reason',
  kept: 'contextfold.audit.kept',
  restored: 'contextfold.audit.restored',
  dropped: 'contextfold.audit.dropped',
  facts: 'contextfold.facts',
  speculative: 'contextfold.speculative',
  summaryKind: 'contextfold.summary.kind',
  summaryInput: 'contextfold.summary.input',
  pruneTokens: 'contextfold.prune.tokens_freed',
  pruneParts: 'contextfold.prune.parts_cleared',
  prunePolicy: 'contextfold.prune.policy',
  pruneReason: 'contextfold.prune.reason',
  pruneSaving: 'contextfold.prune.saving_usd',
  pruneCost: 'contextfold.prune.cache_cost_usd',
} as const

const SPAN_COMPACT = 'contextfold.compact'
const SPAN_SUMMARIZE = 'contextfold.summarize'
const EVENT_PRUNE = 'contextfold.prune'

const ERROR = 2 // SpanStatusCode.ERROR

/** What contextfold calls of `@opentelemetry/api`. */
interface Api {
  trace: {
    getTracer(name: string): TracerLike
    getActiveSpan(): SpanLike | undefined
    setSpan(context: unknown, span: SpanLike): unknown
  }
  context: {
    active(): unknown
    with<T>(context: unknown, fn: () => T): T
  }
}

let api: Api | null | undefined

/** The app's `@opentelemetry/api`, required once; null when it is not installed. */
function otel(): Api | null {
  if (api === undefined) {
    try {
      api = createRequire(import.meta.url)('@opentelemetry/api') as Api
    } catch {
      api = null
    }
  }
  return api
}

/** Where spans go, or undefined when telemetry is off or has nowhere to go. */
interface Sink {
  api: Api
  tracer: TracerLike
  attributes: Record<string, AttributeValue>
}

function off(setting: Telemetry | undefined): boolean {
  return setting === false || (typeof setting === 'object' && setting.enabled === false)
}

function sink(setting: Telemetry | undefined): Sink | undefined {
  if (off(setting)) return undefined
  const found = otel()
  if (!found) return undefined
  const options = typeof setting === 'object' ? setting : {}
  return { api: found, tracer: options.tracer ?? found.trace.getTracer('contextfold'), attributes: options.attributes ?? {} }
}

/**
 * The setting an integration passes on to `compact()`, `AutoCompactor` and `CallPruner`: the user's,
 * with the integration's name and the conversation's id on every span (the user's attributes win).
 */
export function telemetryFor(setting: Telemetry | undefined, scope: { integration: string; conversationId?: string }): Telemetry {
  if (off(setting)) return false
  const options = typeof setting === 'object' ? setting : {}
  const attributes: Record<string, AttributeValue> = { [ATTR.integration]: scope.integration }
  if (scope.conversationId !== undefined) attributes[ATTR.conversationId] = scope.conversationId
  return { ...options, attributes: { ...attributes, ...options.attributes } }
}

/** Sets only the attributes that have a value. */
function set(span: SpanLike, attributes: Record<string, AttributeValue | undefined>): void {
  const defined: Record<string, AttributeValue> = {}
  for (const [k, v] of Object.entries(attributes)) if (v !== undefined) defined[k] = v
  span.setAttributes(defined)
}

function usageAttributes(usage: Usage | undefined): Record<string, number | undefined> {
  if (!usage) return {}
  return {
    [ATTR.inputTokens]: usage.input,
    [ATTR.outputTokens]: usage.output,
    [ATTR.cacheReadTokens]: usage.cacheRead,
    [ATTR.cacheWriteTokens]: usage.cacheWrite,
  }
}

/** What is known of a compaction when it ends. */
export interface CompactionOutcome {
  status: 'compacted' | 'skipped' | 'failed'
  reason?: string
  tokensBefore?: number
  tokensAfter?: number
  /** Messages the summary replaced. */
  summarized?: number
  fallback?: boolean
  /** Why the summarizer's answer was not used. */
  fallbackReason?: string
  /** The loss audit: facts the summary or the kept messages hold, restored verbatim, dropped. */
  audit?: { kept: number; restored: number; dropped: number }
  /** The summary calls' usage. */
  usage?: Usage
  speculative?: boolean
}

/** A compaction span that is running. */
export interface CompactionSpan {
  /** Runs `fn` with the span active, so that what it starts (the summary calls) nests under it. */
  within<T>(fn: () => T): T
  end(outcome: CompactionOutcome): void
  /** Ends the span for an exception (an abort, an error). */
  fail(error: unknown): void
}

/**
 * Starts a `contextfold.compact` span under the active one (a host that compacts by itself: start it
 * when the compaction begins, `end` it with what is known after). Undefined when telemetry is off.
 */
export function startCompaction(
  setting: Telemetry | undefined,
  start: { trigger: CompactionTrigger; tokensBefore?: number; facts?: number },
): CompactionSpan | undefined {
  const s = sink(setting)
  if (!s) return undefined
  const span = s.tracer.startSpan(SPAN_COMPACT, { attributes: { ...s.attributes, [ATTR.trigger]: start.trigger } }, s.api.context.active())
  set(span, { [ATTR.tokensBefore]: start.tokensBefore, [ATTR.facts]: start.facts })
  const active = s.api.trace.setSpan(s.api.context.active(), span)
  return {
    within: (fn) => s.api.context.with(active, fn),
    end(o) {
      set(span, {
        [ATTR.status]: o.status,
        [ATTR.compacted]: o.status === 'compacted',
        [ATTR.reason]: o.reason,
        [ATTR.tokensBefore]: o.tokensBefore,
        [ATTR.tokensAfter]: o.tokensAfter,
        [ATTR.summarized]: o.summarized,
        [ATTR.fallback]: o.fallback,
        [ATTR.fallbackReason]: o.fallbackReason,
        [ATTR.kept]: o.audit?.kept,
        [ATTR.restored]: o.audit?.restored,
        [ATTR.dropped]: o.audit?.dropped,
        [ATTR.speculative]: o.speculative,
        ...usageAttributes(o.usage),
      })
      if (o.status === 'failed') span.setStatus({ code: ERROR, message: o.reason ?? 'failed' })
      span.end()
    },
    fail(error) {
      const aborted = (error as { name?: unknown } | undefined)?.name === 'AbortError'
      set(span, { [ATTR.status]: aborted ? 'aborted' : 'error', [ATTR.compacted]: false })
      span.recordException(error instanceof Error ? error : String(error))
      span.setStatus({ code: ERROR, message: error instanceof Error ? error.message : String(error) })
      span.end()
    },
  }
}

/** A `CompactionResult` as the span reports it. */
export function outcomeOf(result: CompactionResult): CompactionOutcome {
  const o: CompactionOutcome = { status: result.status, tokensBefore: result.tokensBefore, fallback: result.fallback }
  if (result.reason !== undefined) o.reason = result.reason
  if (result.tokensAfter !== undefined) o.tokensAfter = result.tokensAfter
  if (result.plan) o.summarized = result.plan.summarizedIDs.length
  if (result.fallback && result.error) o.fallbackReason = `${result.error.code}: ${result.error.message}`
  if (result.audit) o.audit = { kept: result.audit.kept.length, restored: result.audit.restored.length, dropped: result.audit.dropped.length }
  const usage = result.messages?.find((m) => m.summary === true)?.tokens
  if (usage) o.usage = usage
  return o
}

/** Runs a compaction under a `contextfold.compact` span, active while it runs. */
export async function traceCompaction(
  setting: Telemetry | undefined,
  start: { trigger: CompactionTrigger; speculative?: boolean },
  run: () => Promise<CompactionResult>,
): Promise<CompactionResult> {
  const span = startCompaction(setting, start)
  if (!span) return run()
  let result: CompactionResult
  try {
    result = await span.within(run)
  } catch (e) {
    span.fail(e)
    throw e
  }
  span.end({ ...outcomeOf(result), ...(start.speculative ? { speculative: true } : {}) })
  return result
}

/** Runs one summary call under a `contextfold.summarize` span, active while it runs. */
export async function traceSummary<R extends { finishReason?: string; model?: { modelID: string } }>(
  setting: Telemetry | undefined,
  call: { kind: string; input: string; maxOutputTokens: number },
  run: () => Promise<R>,
): Promise<R> {
  const s = sink(setting)
  if (!s) return run()
  const attributes = { ...s.attributes, [ATTR.summaryKind]: call.kind, [ATTR.summaryInput]: call.input, [ATTR.maxTokens]: call.maxOutputTokens }
  const span = s.tracer.startSpan(SPAN_SUMMARIZE, { attributes }, s.api.context.active())
  let res: R
  try {
    res = await s.api.context.with(s.api.trace.setSpan(s.api.context.active(), span), run)
  } catch (e) {
    span.recordException(e instanceof Error ? e : String(e))
    span.setStatus({ code: ERROR, message: e instanceof Error ? e.message : String(e) })
    span.end()
    throw e
  }
  set(span, { [ATTR.finishReasons]: res?.finishReason ? [res.finishReason] : undefined, [ATTR.responseModel]: res?.model?.modelID })
  span.end()
  return res
}

/**
 * Why a prune ran, by policy: `cache-saving` (the `cache` policy: the tokens it saves outweigh the
 * cache it breaks), `after-compaction` / `prompt-rewritten` (the cache was rewritten anyway),
 * `pressure` (the `tier` policy: the context is at the prune tier), `every-step` (the `opencode` policy),
 * `fit-unread` (outputs the model had not read cut to fit beside a summary, before a compaction).
 */
export type PruneReason = 'cache-saving' | 'after-compaction' | 'prompt-rewritten' | 'pressure' | 'every-step' | 'fit-unread'

/** One prune, as its event reports it. */
export interface PruneRecord {
  tokensFreed: number
  partsCleared: number
  policy: string
  reason: PruneReason
  /** The `cache` policy's figures: USD the following requests save, USD the broken cache costs now. */
  saving?: number
  cost?: number
  /** The context's tokens after it. */
  tokensAfter?: number
}

/**
 * Records a prune: a `contextfold.prune` event on the active span (the AI SDK's step, a compaction),
 * or on a `contextfold.prune` span of its own when none is active.
 */
export function recordPrune(setting: Telemetry | undefined, prune: PruneRecord): void {
  const s = sink(setting)
  if (!s) return
  const attributes: Record<string, AttributeValue> = {
    ...s.attributes,
    [ATTR.pruneTokens]: prune.tokensFreed,
    [ATTR.pruneParts]: prune.partsCleared,
    [ATTR.prunePolicy]: prune.policy,
    [ATTR.pruneReason]: prune.reason,
  }
  if (prune.saving !== undefined) attributes[ATTR.pruneSaving] = prune.saving
  if (prune.cost !== undefined) attributes[ATTR.pruneCost] = prune.cost
  if (prune.tokensAfter !== undefined) attributes[ATTR.tokensAfter] = prune.tokensAfter
  const active = s.api.trace.getActiveSpan()
  if (active && isRecording(active)) {
    active.addEvent(EVENT_PRUNE, attributes)
    return
  }
  const span = s.tracer.startSpan(EVENT_PRUNE, { attributes: s.attributes }, s.api.context.active())
  span.addEvent(EVENT_PRUNE, attributes)
  span.end()
}

/** A span that records (the no-op API's and the AI SDK's disabled spans do not). */
function isRecording(span: SpanLike): boolean {
  const f = (span as { isRecording?: () => boolean }).isRecording
  return typeof f === 'function' ? f.call(span) : true
}
