// AutoCompactor: call `afterStep()` after each model step; it reports pressure, prunes at the prune
// tier, compacts on overflow, and stops itself after repeated failures or ineffective compactions.
import type { ContextUsage, PruneResult, Session } from '../index.js'
import { compact } from './compact.js'
import type { CompactOptions, CompactionResult } from './types.js'

export interface AutoCompactorEvents {
  /** The context is at the `notice` tier or above (emitted on every step while it is). */
  pressure: { usage: ContextUsage }
  /** Old tool output was cleared (`usage` is after the prune). */
  prune: { result: PruneResult; usage: ContextUsage }
  /** A compaction starts. */
  compacting: { usage: ContextUsage; overflow: boolean }
  /** A compaction ended (compacted, skipped or failed). */
  compact: { result: CompactionResult }
  /** Automatic compaction stopped: `failures` (consecutive failures) or `thrash` (ineffective compactions). */
  tripped: { kind: 'failures' | 'thrash'; reason: string }
}

export type AutoCompactorEvent = keyof AutoCompactorEvents
export type AutoCompactorListener<K extends AutoCompactorEvent> = (event: AutoCompactorEvents[K]) => void

export interface AutoCompactorOptions
  extends Omit<CompactOptions, 'signal' | 'upTo' | 'from' | 'auto' | 'overflow' | 'replay'> {
  /**
   * Run `session.prune()` at the `prune` tier and above, before compacting. Default: the session's
   * own setting, `session.options.compaction.prune` (`CompactionConfig.prune`, false unless set).
   */
  prune?: boolean
  /** Consecutive failed compactions that stop automatic compaction (default 3). */
  maxFailures?: number
  /** Compactions in a row that leave the context over the limit before automatic compaction stops (default 2). */
  maxIneffective?: number
}

export interface AfterStepOptions {
  signal?: AbortSignal
  /** The provider rejected the last request as too long: compact even if the local count is under the limit. */
  overflow?: boolean
  /** With `overflow`: the user message the provider rejected, replayed after the summary. */
  replay?: string
}

export interface AfterStepResult {
  /** The context's usage at the end of the step. */
  usage: ContextUsage
  pruned?: PruneResult
  compaction?: CompactionResult
  /** Why nothing was compacted although it was needed (tripped breaker, re-entrant call). */
  skipped?: string
}

export interface AutoCompactorState {
  failures: number
  ineffective: number
  tripped?: { kind: 'failures' | 'thrash'; reason: string }
}

export class AutoCompactor {
  readonly session: Session
  readonly #options: AutoCompactorOptions
  readonly #listeners = new Map<AutoCompactorEvent, Set<(event: never) => void>>()
  #failures = 0
  #ineffective = 0
  #tripped: AutoCompactorState['tripped']
  #busy = false

  constructor(session: Session, options: AutoCompactorOptions = {}) {
    this.session = session
    this.#options = options
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

  /** Whether steps prune: the `prune` option, else the session's `compaction.prune`. */
  get prunes(): boolean {
    return this.#options.prune ?? this.session.options?.compaction?.prune ?? false
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
      if (this.prunes && (usage.tier === 'prune' || usage.tier === 'compact' || overflow)) {
        const result = session.prune()
        if (result.prunedPartIDs.length > 0) {
          usage = session.usage()
          out.pruned = result
          out.usage = usage
          this.#emit('prune', { result, usage })
        }
      }
      if (!overflow && !session.isOverflow()) return out
      if (this.#tripped) {
        out.skipped = this.#tripped.reason
        return out
      }
      this.#emit('compacting', { usage, overflow })
      const { prune: _p, maxFailures: _f, maxIneffective: _i, ...compactOptions } = this.#options
      const opts: CompactOptions = { ...compactOptions, auto: true, overflow }
      if (options.signal) opts.signal = options.signal
      if (overflow && options.replay !== undefined) opts.replay = options.replay
      let result: CompactionResult
      try {
        result = await compact(session, opts)
      } catch (e) {
        if (!options.signal?.aborted) this.#failed(e instanceof Error ? e.message : String(e))
        throw e
      }
      out.compaction = result
      out.usage = session.usage()
      this.#emit('compact', { result })
      if (result.status === 'compacted') {
        this.#failures = 0
        if (session.isOverflow()) {
          this.#ineffective++
          const max = this.#options.maxIneffective ?? 2
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
        if (this.#ineffective >= (this.#options.maxIneffective ?? 2)) {
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
