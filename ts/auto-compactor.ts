// AutoCompactor: call `afterStep()` after each model step; it reports pressure, prunes at the prune
// tier, compacts on overflow, and stops itself after repeated failures or ineffective compactions.
import type { ContextUsage, Message, PruneDecision, PrunePolicy, PruneResult, Session } from './native.js'
import { compact, recordSummarized, summarizeAhead, type Summarized } from './compact.js'
import { recordPrune, type PruneReason } from './telemetry.js'
import type { CompactOptions, CompactionResult, LastRequest } from './types.js'

export interface AutoCompactorEvents {
  /** The context is at the `notice` tier or above (emitted on every step while it is). */
  pressure: { usage: ContextUsage }
  /** Old tool output was cleared (`usage` is after the prune; `decision`: why, under the `cache` policy). */
  prune: { result: PruneResult; usage: ContextUsage; decision?: PruneDecision }
  /** A compaction starts. */
  compacting: { usage: ContextUsage; overflow: boolean }
  /** A speculative summary of the context so far started in the background. */
  speculating: { usage: ContextUsage; messages: number }
  /** A compaction ended (compacted, skipped or failed). */
  compact: { result: CompactionResult }
  /** Automatic compaction stopped: `failures` (consecutive failures) or `thrash` (ineffective compactions). */
  tripped: { kind: 'failures' | 'thrash'; reason: string }
}

export type AutoCompactorEvent = keyof AutoCompactorEvents

/** Default `maxIneffective`: ineffective compactions in a row that trip the breaker. */
export const MAX_INEFFECTIVE = 2
export type AutoCompactorListener<K extends AutoCompactorEvent> = (event: AutoCompactorEvents[K]) => void

export interface AutoCompactorOptions
  extends Omit<CompactOptions, 'signal' | 'upTo' | 'from' | 'auto' | 'overflow' | 'replay' | 'lastRequest' | 'trigger'> {
  /**
   * When steps prune old tool output. Default: the session's own setting,
   * `session.options.compaction.prune`, which defaults to `'cache'`:
   * - `'cache'`: where the tokens it saves over the requests expected to follow outweigh the
   *   provider cache it breaks (`session.decidePrune()`, judged with `clock`), and right after a
   *   compaction, which breaks the cache anyway;
   * - `'opencode'`: after every step;
   * - `'tier'` (`true`): at the `prune` tier and above, before compacting;
   * - `'never'` (`false`): compaction only.
   */
  prune?: PrunePolicy | boolean
  /**
   * The time (epoch ms) the `cache` policy judges the provider cache's age by. Default: the
   * messages' own times (the newest message's), so a replay decides as the live run did.
   */
  clock?: () => number
  /** Consecutive failed compactions that stop automatic compaction (default 3). */
  maxFailures?: number
  /** Compactions in a row that leave the context over the limit before automatic compaction stops (default 2). */
  maxIneffective?: number
  /**
   * Speculative compaction: when usage crosses this share of the usable window (e.g. 0.7), a
   * snapshot of the context is summarized in the background (abortable, one at a time). At
   * overflow, if the session still starts with that snapshot and the user has made no new request
   * since, its summary is recorded at once and only the messages since the snapshot stay verbatim;
   * otherwise it is discarded and the compaction runs as usual. Off by default.
   */
  speculateAt?: number
  /**
   * Compact once usage reaches this share of the usable window (e.g. `0.8`), before it overflows;
   * `'cost'`: at the threshold that costs least per request with the provider's prompt cache
   * (`decidePrune().cheapestThreshold`, never below `S + 0.6 (window − S)`, `S` the size after a
   * compaction, so at most 1.67× as many compactions: each summary loses detail). Default:
   * `'cost'` under the `cache` prune policy (the default), else at overflow (`1`). Under the
   * `cache` policy a compaction due below the window waits one step when the step that just
   * arrived is large and the model has not read it yet (`AfterStepResult.deferred`).
   */
  compactAt?: number | 'cost'
  /**
   * The breaker's state to start from: the `state` of this conversation's previous compactor,
   * when the session was reloaded (e.g. from a store, once per call).
   */
  state?: AutoCompactorState
}

export interface AfterStepOptions {
  signal?: AbortSignal
  /** The provider rejected the last request as too long: compact even if the local count is under the limit. */
  overflow?: boolean
  /** Compact now although the context is under the limit (a trigger of the caller's own). */
  force?: boolean
  /** With `overflow`: the user message the provider rejected, replayed after the summary. */
  replay?: string
  /**
   * The agent's request as it stands (its messages up to now, system prompt, tools): the prefix of
   * a `summaryInput: 'conversation'` summary request. Default: the session's model messages.
   */
  lastRequest?: LastRequest
}

export interface AfterStepResult {
  /** The context's usage at the end of the step. */
  usage: ContextUsage
  pruned?: PruneResult
  /**
   * Tool outputs the model had not read yet, cut to fit beside a summary before the compaction
   * (`Session.cutUnread`, head and tail kept): store it as a prune, before the compaction.
   */
  cut?: PruneResult
  compaction?: CompactionResult
  /** Why nothing was compacted although it was needed (tripped breaker, re-entrant call). */
  skipped?: string
  /** The compaction recorded a summary written ahead (`speculateAt`), without waiting for the summarizer. */
  speculative?: boolean
  /**
   * A compaction was due at the threshold and waits for the next step (the `cache` policy): the
   * step that just arrived is large and the model has not read it yet (`PruneDecision.deferCompaction`).
   */
  deferred?: boolean
}

interface Speculation {
  controller: AbortController
  /** The context when the summary started: ids, and each message as JSON (to see that none changed). */
  ids: string[]
  snapshot: string[]
  promise: Promise<Summarized | CompactionResult | undefined>
}

/** A request the user typed (not a summary's request, not injected text only). */
function isUserRequest(m: Message): boolean {
  if (m.role !== 'user' || m.parts.some((p) => p.type === 'compaction')) return false
  return m.parts.some((p) => p.type === 'text' && p.synthetic !== true && typeof p.text === 'string' && p.text.trim() !== '')
}

/** A message the verbatim tail may start on (the native rule): a user or assistant message that is not a summary, a compaction request or an errored answer. */
function canStartTail(m: Message): boolean {
  if (m.role === 'system' || m.summary === true || m.error !== undefined) return false
  return !m.parts.some((p) => p.type === 'compaction')
}

export interface AutoCompactorState {
  failures: number
  ineffective: number
  tripped?: { kind: 'failures' | 'thrash'; reason: string }
}

/** The options `compact()` takes, out of the compactor's own. */
function compactOptionsOf(
  options: AutoCompactorOptions,
): Omit<AutoCompactorOptions, 'prune' | 'clock' | 'maxFailures' | 'maxIneffective' | 'speculateAt' | 'compactAt' | 'state'> {
  const { prune: _p, clock: _k, maxFailures: _f, maxIneffective: _i, speculateAt: _s, compactAt: _c, state: _t, ...rest } = options
  return rest
}

/** A `prune` setting as a policy name (`true` is `'tier'`, `false` is `'never'`). */
function policyOf(prune: PrunePolicy | boolean | undefined): PrunePolicy {
  if (prune === true) return 'tier'
  if (prune === false) return 'never'
  return prune ?? 'cache'
}

export class AutoCompactor {
  readonly session: Session
  readonly #options: AutoCompactorOptions
  readonly #listeners = new Map<AutoCompactorEvent, Set<(event: never) => void>>()
  #failures = 0
  #ineffective = 0
  #tripped: AutoCompactorState['tripped']
  #busy = false
  #speculation: Speculation | undefined
  /** `compactAt: 'cost'`: the threshold the last step weighed. */
  #costAt: number | undefined

  constructor(session: Session, options: AutoCompactorOptions = {}) {
    this.session = session
    this.#options = options
    if (options.state) {
      this.#failures = options.state.failures
      this.#ineffective = options.state.ineffective
      this.#tripped = options.state.tripped && { ...options.state.tripped }
    }
  }

  /** Subscribes to an event; returns the unsubscribe function. A listener's exception is ignored. */
  on<K extends AutoCompactorEvent>(type: K, listener: AutoCompactorListener<K>): () => void {
    let set = this.#listeners.get(type)
    if (!set) this.#listeners.set(type, (set = new Set()))
    set.add(listener as (event: never) => void)
    return () => this.off(type, listener)
  }

  off<K extends AutoCompactorEvent>(type: K, listener: AutoCompactorListener<K>): void {
    this.#listeners.get(type)?.delete(listener as (event: never) => void)
  }

  #emit<K extends AutoCompactorEvent>(type: K, event: AutoCompactorEvents[K]): void {
    for (const listener of [...(this.#listeners.get(type) ?? [])]) {
      try {
        ;(listener as AutoCompactorListener<K>)(event)
      } catch {
        // A UI listener must not break the agent loop.
      }
    }
  }

  get state(): AutoCompactorState {
    const s: AutoCompactorState = { failures: this.#failures, ineffective: this.#ineffective }
    if (this.#tripped) s.tripped = { ...this.#tripped }
    return s
  }

  /** When steps prune: the `prune` option, else the session's `compaction.prune`. */
  get prunePolicy(): PrunePolicy {
    return policyOf(this.#options.prune ?? this.session.options?.compaction?.prune)
  }

  /** Whether steps may prune at all (the policy is not `'never'`). */
  get prunes(): boolean {
    return this.prunePolicy !== 'never'
  }

  /** True while a step is compacting. */
  get busy(): boolean {
    return this.#busy
  }

  /** Re-arms automatic compaction after it tripped (e.g. the user fixed the model or the key). */
  reset(): void {
    this.#failures = 0
    this.#ineffective = 0
    this.#tripped = undefined
  }

  #trip(kind: 'failures' | 'thrash', reason: string): void {
    this.#tripped = { kind, reason }
    this.#emit('tripped', { kind, reason })
  }

  /** Drops the speculative summary, if any (aborting it while it runs). */
  discardSpeculation(): void {
    this.#speculation?.controller.abort()
    this.#speculation = undefined
  }

  #speculate(usage: ContextUsage, lastRequest?: LastRequest): void {
    const at = this.#options.speculateAt
    if (at === undefined || this.#speculation || this.#tripped || usage.usable <= 0 || usage.tokens < at * usage.usable) return
    const snapshot = this.session.context()
    const last = snapshot[snapshot.length - 1]
    if (!last) return
    const controller = new AbortController()
    const compactOptions = compactOptionsOf(this.#options)
    const ahead: CompactOptions = { ...compactOptions, auto: true, upTo: last.id, signal: controller.signal, ...(lastRequest ? { lastRequest } : {}) }
    const promise = summarizeAhead(this.session, ahead).catch(
      () => undefined, // a failed or aborted speculation is discarded: the compaction at overflow runs as usual
    )
    this.#speculation = { controller, snapshot: snapshot.map((m) => JSON.stringify(m)), ids: snapshot.map((m) => m.id), promise }
    this.#emit('speculating', { usage, messages: snapshot.length })
  }

  /** The speculative summary, if the context still starts with its snapshot; the tail starts after it. */
  async #speculated(): Promise<Summarized | undefined> {
    const spec = this.#speculation
    this.#speculation = undefined
    if (!spec) return undefined
    const context = this.session.context()
    const prefix =
      context.length > spec.ids.length && spec.ids.every((id, i) => context[i]?.id === id && JSON.stringify(context[i]) === spec.snapshot[i])
    const since = prefix ? context.slice(spec.ids.length) : []
    // A request the user made since the snapshot makes the summary's "current work" stale: it
    // would present an older request as the one to continue. Summarize afresh instead.
    const tail = since.some(isUserRequest) ? undefined : since.find(canStartTail)
    if (!tail) {
      spec.controller.abort()
      return undefined
    }
    const s = await spec.promise
    if (!s || 'status' in s) return undefined
    s.plan.tailStartID = tail.id
    s.plan.tokensBefore = this.session.usage().tokens
    return s
  }

  /**
   * Call after each model step (and after appending its messages). Emits `pressure`, prunes at the
   * `prune` tier and above, and compacts when the context overflows (or `overflow: true`). A call
   * made while this compactor is compacting (e.g. from inside the summarizer) does nothing.
   */
  async afterStep(options: AfterStepOptions = {}): Promise<AfterStepResult> {
    const session = this.session
    if (this.#busy) return { usage: session.usage(), skipped: 'a compaction is already running (re-entrant call)' }
    this.#busy = true
    try {
      let usage = session.usage()
      if (usage.tier !== 'ok') this.#emit('pressure', { usage })
      const out: AfterStepResult = { usage }
      const overflow = options.overflow === true
      const policy = this.prunePolicy
      const byCost = this.#compactAt === 'cost'
      const decision = policy === 'cache' || byCost ? session.decidePrune(this.#decideOptions()) : undefined
      if (decision && byCost) this.#costAt = decision.cheapestThreshold
      const due = overflow || options.force === true || this.#due(usage)
      if (policy === 'opencode' || (policy === 'tier' && (usage.tier === 'prune' || usage.tier === 'compact' || overflow))) {
        usage = this.#prune(out, policy === 'opencode' ? 'every-step' : 'pressure') ?? usage
      } else if (policy === 'cache' && !due && decision?.prune) {
        usage = this.#prune(out, 'cache-saving', decision) ?? usage
      }
      // Under the cost policy, a compaction due at the threshold waits one request when the step
      // that just arrived is large and unread (`decision.deferCompaction`, the window has room):
      // the model reads it first, and the summary can take it.
      const waits = due && policy === 'cache' && !overflow && options.force !== true && decision?.deferCompaction === true
      if (waits) out.deferred = true
      else if (due) {
        // A compaction summarizes what does not fit its tail: unread results too large for it are
        // cut to fit first, so the model reads them (and the prompt may fit without compacting).
        const cut = session.cutUnread()
        if (cut.prunedPartIDs.length > 0) {
          out.cut = cut
          out.usage = usage = session.usage()
          this.#recordPrune(cut, 'fit-unread', usage)
        }
      }
      if (!due || (!overflow && options.force !== true && !this.#due(usage)) || waits) {
        this.#speculate(usage, options.lastRequest)
        // The step's new messages get their transcript blocks and facts now, while the agent
        // waits on the model anyway: the compaction at the threshold then only gathers them.
        session.warmCompaction()
        return out
      }
      if (this.#tripped) {
        out.skipped = this.#tripped.reason
        return out
      }
      this.#emit('compacting', { usage, overflow })
      const compactOptions = compactOptionsOf(this.#options)
      const opts: CompactOptions = { ...compactOptions, auto: true, overflow }
      if (options.signal) opts.signal = options.signal
      if (overflow && options.replay !== undefined) opts.replay = options.replay
      if (options.lastRequest) opts.lastRequest = options.lastRequest
      let result: CompactionResult
      try {
        const ahead = opts.replay === undefined ? await this.#speculated() : (this.discardSpeculation(), undefined)
        result = ahead ? await recordSummarized(session, ahead, opts) : await compact(session, opts)
        if (ahead) out.speculative = result.status === 'compacted'
      } catch (e) {
        if (!options.signal?.aborted) this.#failed(e instanceof Error ? e.message : String(e))
        throw e
      }
      out.compaction = result
      out.usage = session.usage()
      this.#emit('compact', { result })
      // The compaction rewrote the prompt: clearing the kept tail's old output now breaks nothing more.
      if (policy === 'cache' && result.status === 'compacted') out.usage = this.#prune(out, 'after-compaction') ?? out.usage
      if (result.status === 'compacted') {
        this.#failures = 0
        if (this.#due(out.usage)) {
          this.#ineffective++
          const max = this.#options.maxIneffective ?? MAX_INEFFECTIVE
          if (this.#ineffective >= max) {
            this.#trip(
              'thrash',
              `${this.#ineffective} compactions in a row left the context over the limit ` +
                `(${out.usage.tokens} of ${out.usage.usable} tokens): automatic compaction stopped`,
            )
          }
        } else this.#ineffective = 0
      } else if (result.status === 'skipped' && result.code === 'CF_NOT_SMALLER') {
        // Nothing left to shrink: counted like a compaction that left the context over the limit.
        this.#ineffective++
        if (this.#ineffective >= (this.#options.maxIneffective ?? MAX_INEFFECTIVE)) {
          this.#trip('thrash', `${this.#ineffective} compactions in a row could not shrink the context (${result.reason}): automatic compaction stopped`)
        }
      } else if (result.status === 'failed') {
        this.#failed(result.reason ?? 'unknown error')
      }
      return out
    } finally {
      this.#busy = false
    }
  }

  /** Prunes; when something was cleared, records it in `out`, emits `prune` (and its telemetry event) and returns the usage after. */
  #prune(out: AfterStepResult, reason: PruneReason, decision?: PruneDecision): ContextUsage | undefined {
    const result = this.session.prune()
    if (result.prunedPartIDs.length === 0) return undefined
    const usage = this.session.usage()
    out.pruned = result
    out.usage = usage
    this.#emit('prune', decision ? { result, usage, decision } : { result, usage })
    this.#recordPrune(result, reason, usage, decision)
    return usage
  }

  /** A prune's telemetry event. */
  #recordPrune(result: PruneResult, reason: PruneReason, usage: ContextUsage, decision?: PruneDecision): void {
    recordPrune(this.#options.telemetry, {
      tokensFreed: result.tokensFreed,
      partsCleared: result.prunedPartIDs.length,
      policy: this.prunePolicy,
      reason,
      tokensAfter: usage.tokens,
      ...(decision ? { saving: decision.saving, cost: decision.cost } : {}),
    })
  }

  /** What `decidePrune` weighs the cache by: the clock, and where the next compaction runs (`compactAt`). */
  #decideOptions(): { now?: number; threshold?: number | 'cost' } {
    const o: { now?: number; threshold?: number | 'cost' } = {}
    if (this.#options.clock) o.now = this.#options.clock()
    const at = this.#compactAt
    if (at === 'cost') o.threshold = 'cost'
    else if (at !== undefined) o.threshold = this.#threshold(this.session.usage())
    return o
  }

  /** `compactAt`, or `'cost'` under the `cache` policy: one arithmetic decides prunes and compactions. */
  get #compactAt(): number | 'cost' | undefined {
    return this.#options.compactAt ?? (this.prunePolicy === 'cache' ? 'cost' : undefined)
  }

  /** The tokens `compactAt` compacts at, if it says (for `'cost'`, once a step has weighed it). */
  #threshold(usage: ContextUsage): number | undefined {
    const at = this.#compactAt
    if (at === 'cost') return this.#costAt
    return at !== undefined && usage.usable > 0 ? Math.floor(at * usage.usable) : undefined
  }

  /** Whether `usage` calls for a compaction: over the window, or past `compactAt`. */
  #due(usage: ContextUsage): boolean {
    const threshold = this.#threshold(usage)
    return this.session.isOverflow() || (threshold !== undefined && usage.tokens >= threshold)
  }

  /** The provider rejected the request as too long: compact now, replaying `messageID` if given. */
  onOverflow(messageID?: string, options: Omit<AfterStepOptions, 'overflow' | 'replay'> = {}): Promise<AfterStepResult> {
    return this.afterStep({ ...options, overflow: true, ...(messageID !== undefined ? { replay: messageID } : {}) })
  }

  #failed(reason: string): void {
    this.#failures++
    const max = this.#options.maxFailures ?? 3
    if (this.#failures >= max && !this.#tripped) {
      this.#trip('failures', `${this.#failures} consecutive compaction failures (last: ${reason}): automatic compaction stopped`)
    }
  }
}
