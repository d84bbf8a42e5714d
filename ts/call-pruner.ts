// Pruning the copy of each model call's messages (pi's `context` event, opencode's transform): the
// agent's own history keeps every output, so every call starts from it again. What was cleared once
// stays cleared in every later call (remembered by tool call id), so the prompt's prefix stays what
// the provider cached; more is cleared only when the prune policy says so, as the AutoCompactor
// decides for a session it holds. A call over the window has the tool outputs the model has not read
// yet cut to fit (head and tail kept), remembered the same way.
import { Session, type Message, type Overhead, type PruneDecision, type PrunePolicy, type PruneResult, type SessionOptions, type ToolPart } from './native.js'
import { recordPrune, type Telemetry } from './telemetry.js'

export interface CallPrunerOptions {
  /** When to clear more (default `'cache'`; see `AutoCompactorOptions.prune`). */
  policy?: PrunePolicy
  /** The time (epoch ms) the `cache` policy judges the provider cache's age by (default: the messages' own). */
  clock?: () => number
  /** OpenTelemetry: a `contextfold.prune` event for each call that clears more (see `TelemetryOptions`). */
  telemetry?: Telemetry
}

/** What one call clears. */
export interface CallPrune {
  /** Tool call id → when it was cleared and the stub its output reads as (`null`: the cleared marker); earlier calls' clears included. */
  cleared: Map<string, Cleared>
  /** Outputs this call cleared for the first time. */
  added: number
  /** Tokens those free. */
  tokensFreed: number
  /** Why, under the `cache` policy. */
  decision?: PruneDecision
  /** The call was over the window: the unread outputs this call cut to fit (`Session.cutUnread`). */
  cut?: PruneResult
}

export interface Cleared {
  /** The prune's mark (epoch ms). */
  at: number
  stub: string | null
  /** Cut to fit the window (head and tail kept), not cleared by a prune rule. */
  fit?: true
}

/** What an integration says when a call cut unread results to fit (`onWarning`, a log line). */
export function cutWarning(cut: PruneResult): string {
  const n = cut.prunedPartIDs.length
  return `${n === 1 ? 'a tool output' : `${n} tool outputs`} the model had not read yet would not fit the window: cut to fit (head and tail kept, ${cut.tokensFreed} tokens left out)`
}

const isTool = (p: Message['parts'][number]): p is ToolPart => p.type === 'tool'

/** `messages` with the remembered outputs marked cleared (a copy where something changes). */
function withCleared(messages: readonly Message[], cleared: ReadonlyMap<string, Cleared>): Message[] {
  return messages.map((m) => {
    if (!m.parts.some((p) => isTool(p) && cleared.has(p.callID))) return m
    const parts = m.parts.map((p) => {
      const c = isTool(p) ? cleared.get(p.callID) : undefined
      if (!c || !isTool(p) || p.state.status !== 'completed') return p
      return { ...p, state: { ...p.state, compactedAt: c.at, ...(c.stub !== null ? { compactedAs: c.stub } : {}) } }
    })
    return { ...m, parts }
  })
}

export class CallPruner {
  readonly #options: CallPrunerOptions
  readonly #cleared = new Map<string, Cleared>()
  /** The first message of the last call: another one means the prompt was rewritten (a compaction). */
  #head: string | undefined

  constructor(options: CallPrunerOptions = {}) {
    this.#options = options
  }

  /** Whether an earlier call cleared or cut something (later calls send it so). */
  get clearing(): boolean {
    return this.#cleared.size > 0
  }

  /**
   * `messages` (in canonical form) with what earlier calls' prunes cleared marked so. Outputs a call
   * cut to fit stay whole: a compaction cuts them to fit its own tail.
   */
  apply(messages: readonly Message[]): Message[] {
    return withCleared(messages, new Map([...this.#cleared].filter(([, c]) => !c.fit)))
  }

  /**
   * Decides what this call's messages (in canonical form) send cleared: old output when the prune
   * policy says so (none with `clear: false`), and the unread outputs cut to fit when the call,
   * with the system prompt and tools it carries (`overhead`), is over the window.
   */
  prune(messages: readonly Message[], options: SessionOptions, { clear = true, overhead }: { clear?: boolean; overhead?: Overhead } = {}): CallPrune {
    const head = messages[0] ? JSON.stringify(messages[0].parts) : undefined
    const rewritten = this.#head !== undefined && head !== this.#head
    this.#head = head
    const session = Session.fromMessages(withCleared(messages, this.#cleared), options)
    const extra = overhead ? session.setOverhead(overhead) : 0
    const policy = this.#options.policy ?? 'cache'
    let decision: PruneDecision | undefined
    let go = clear && (policy === 'opencode' || (policy === 'tier' && ['prune', 'compact'].includes(session.usage().tier)))
    if (clear && policy === 'cache') {
      // A rewritten prompt is written to the cache again anyway: clearing now breaks nothing more.
      decision = session.decidePrune(this.#options.clock ? { now: this.#options.clock() } : {})
      go = rewritten || decision.prune
    }
    const out: CallPrune = { cleared: new Map(), added: 0, tokensFreed: 0, ...(decision ? { decision } : {}) }
    if (go) {
      const result = session.prune()
      const byPart = new Map(result.prunedPartIDs.map((id, i) => [id, result.stubs[i] ?? null]))
      for (const m of messages) {
        for (const p of m.parts) {
          if (isTool(p) && byPart.has(p.id)) this.#cleared.set(p.callID, { at: result.compactedAt, stub: byPart.get(p.id)! })
        }
      }
      out.added = result.prunedPartIDs.length
      out.tokensFreed = result.tokensFreed
      if (out.added > 0) {
        recordPrune(this.#options.telemetry, {
          tokensFreed: result.tokensFreed,
          partsCleared: out.added,
          policy,
          reason: policy === 'cache' ? (decision?.prune ? 'cache-saving' : 'prompt-rewritten') : policy === 'tier' ? 'pressure' : 'every-step',
          tokensAfter: result.tokensAfter,
          ...(decision ? { saving: decision.saving, cost: decision.cost } : {}),
        })
      }
    }
    // Counted from the messages: a provider's report on the last answer predates its tool results.
    const counted = session.contextTokens().tokens.reduce((a, b) => a + b, 0) + extra
    const usable = session.usage().usable
    if (usable > 0 && counted > usable) {
      const cut = this.#fit(messages, options, overhead)
      if (cut) out.cut = cut
    }
    for (const m of messages) {
      for (const p of m.parts) {
        const c = isTool(p) ? this.#cleared.get(p.callID) : undefined
        if (c && isTool(p)) out.cleared.set(p.callID, c)
      }
    }
    return out
  }

  /**
   * Cuts the outputs of the last step, which the model has not read (it asked for them in the call
   * before), to what fits beside a summary: the same cut `AutoCompactor` makes before a compaction,
   * so the cut output is what the tail of a compaction keeps too.
   */
  #fit(messages: readonly Message[], options: SessionOptions, overhead: Overhead | undefined): PruneResult | undefined {
    const marked = withCleared(messages, this.#cleared)
    const last = marked.at(-1)
    if (last?.role !== 'assistant' || !last.parts.some(isTool)) return undefined
    const session = Session.fromMessages(marked.slice(0, -1), options)
    if (overhead) session.setOverhead(overhead)
    session.recordRequest()
    session.append(last)
    const cut = session.cutUnread()
    if (cut.prunedPartIDs.length === 0) return undefined
    const byPart = new Map(cut.prunedPartIDs.map((id, i) => [id, cut.stubs[i] ?? null]))
    for (const p of last.parts) {
      if (isTool(p) && byPart.has(p.id)) this.#cleared.set(p.callID, { at: cut.compactedAt, stub: byPart.get(p.id)!, fit: true })
    }
    recordPrune(this.#options.telemetry, {
      tokensFreed: cut.tokensFreed,
      partsCleared: cut.prunedPartIDs.length,
      policy: this.#options.policy ?? 'cache',
      reason: 'fit-unread',
      tokensAfter: cut.tokensAfter,
    })
    return cut
  }
}
