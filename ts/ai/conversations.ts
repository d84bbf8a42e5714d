// The engine behind `contextfoldMiddleware` and `contextfoldPrepareStep`: one native Session per
// conversation, found from the messages of each call. A call appends only what is new (the
// native sync reads the first message and the window past what it holds), compacts through
// `AutoCompactor` when the call would not fit, and hands back the compacted messages from then on.
import { AsyncLocalStorage } from 'node:async_hooks'
import { createHash } from 'node:crypto'

import { Session, type ModelMessageLike } from '../../native.js'
import { AutoCompactor } from '../auto-compactor.js'
import type { CompactionResult } from '../types.js'
import { modelInfo, type ModelRef } from './models.js'
import { sessionOptions, tokensOf, type ContextfoldAiOptions } from './options.js'

/** Set while a compaction of ours runs: a summary call made through a wrapped model passes as it is. */
const compacting = new AsyncLocalStorage<true>()

/** True inside a compaction this integration started (its summarizer's own model calls). */
export function insideCompaction(): boolean {
  return compacting.getStore() === true
}

/** A stable digest of a message: binary data as base64, URLs as text. */
function digest(m: unknown): string {
  const json = JSON.stringify(m, (_k, v: unknown) => {
    if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')
    if (v instanceof ArrayBuffer) return Buffer.from(v).toString('base64')
    if (v instanceof URL) return v.href
    return v
  })
  return createHash('sha256').update(json ?? '').digest('base64url')
}

/** The messages handed back last: a loop that carries them forward (ai v7) continues from them. */
interface Handed {
  first: string
  last: string
  length: number
}

/** One conversation: its session, its compactor, and what was handed back to the loop. */
export class Conversation {
  readonly id: string
  readonly session: Session
  readonly auto: AutoCompactor
  /** A compaction (or a prune) changed what the model is sent: hand back the session's messages. */
  rewritten = false
  handed: Handed | undefined
  /** Provider usage of the last call, put on the answer that arrives with the next call. */
  usage: unknown

  constructor(id: string, session: Session, auto: AutoCompactor) {
    this.id = id
    this.session = session
    this.auto = auto
  }

  /** Whether `messages` continue what was handed back last. */
  continuesHanded(messages: readonly ModelMessageLike[]): boolean {
    const h = this.handed
    return !!h && messages.length >= h.length && digest(messages[0]) === h.first && digest(messages[h.length - 1]) === h.last
  }

  /** The session's messages as the model gets them; remembered so that a loop carrying them forward continues. */
  hand(): ModelMessageLike[] {
    const out = this.session.toModelMessages() as unknown as ModelMessageLike[]
    this.handed = out.length ? { first: digest(out[0]), last: digest(out[out.length - 1]), length: out.length } : undefined
    return out
  }
}

/** What the model call looks like besides its messages. */
export interface CallShape {
  system?: string[]
  tools?: unknown
  maxOutputTokens?: number
}

export class Engine {
  readonly #options: ContextfoldAiOptions
  /** Conversations by the digest of their first message, most recently used last. */
  readonly #byFirst = new Map<string, Conversation[]>()
  #count = 0

  constructor(options: ContextfoldAiOptions) {
    this.#options = options
  }

  /**
   * The conversation `messages` belong to, with the messages it did not hold yet appended (and
   * the previous call's usage, or `stepUsage`, on its answer). A new one when none holds a prefix
   * of them.
   */
  async conversation(messages: readonly ModelMessageLike[], model: ModelRef, call: CallShape, stepUsage?: unknown): Promise<Conversation> {
    const first = digest(messages[0])
    const candidates = [...(this.#byFirst.get(first) ?? []), ...this.#handedFrom(first)]
    for (const c of candidates) {
      const reported = stepUsage ?? c.usage
      const usage = reported === undefined ? {} : { usage: reported }
      if (c.continuesHanded(messages)) {
        c.session.appendModelMessages(messages.slice(c.handed!.length) as ModelMessageLike[], usage)
      } else if (c.session.syncModelMessages(messages as ModelMessageLike[], usage).status === 'diverged') {
        continue
      }
      c.usage = undefined
      this.#touch(first, c)
      return c
    }
    const c = await this.#create(model, call)
    c.session.appendModelMessages(messages as ModelMessageLike[])
    this.#touch(first, c)
    return c
  }

  /** Conversations whose handed-back messages start with `first` (a loop that carried them forward). */
  #handedFrom(first: string): Conversation[] {
    const out: Conversation[] = []
    for (const list of this.#byFirst.values()) for (const c of list) if (c.handed?.first === first) out.push(c)
    return out
  }

  #touch(first: string, c: Conversation): void {
    for (const [key, list] of this.#byFirst) {
      const i = list.indexOf(c)
      if (i >= 0) list.splice(i, 1)
      if (!list.length) this.#byFirst.delete(key)
    }
    // Re-inserted last: the map's order is the order of use.
    const list = this.#byFirst.get(first) ?? []
    this.#byFirst.delete(first)
    this.#byFirst.set(first, [...list, c])
    const max = this.#options.maxConversations ?? 100
    let total = 0
    for (const l of this.#byFirst.values()) total += l.length
    while (total > max) {
      const [oldest] = this.#byFirst.keys()
      if (oldest === undefined) break
      const l = this.#byFirst.get(oldest)!
      l.shift()
      if (!l.length) this.#byFirst.delete(oldest)
      total--
    }
  }

  async #create(model: ModelRef, call: CallShape): Promise<Conversation> {
    const o = this.#options
    const info = await modelInfo(model, { ...(o.contextWindow !== undefined ? { contextWindow: o.contextWindow } : {}) })
    const maxOutput = call.maxOutputTokens ?? o.maxOutputTokens ?? Math.min(info.limit.output ?? 4_096, 32_000)
    const session = new Session(sessionOptions(o, { providerID: info.providerID, modelID: info.modelID }, info.limit.context, maxOutput))
    const auto = new AutoCompactor(session, {
      ...(o.summarizer ? { summarizer: o.summarizer } : {}),
      ...(o.template ? { template: o.template } : {}),
      ...(o.instructions ? { instructions: o.instructions } : {}),
      ...(o.focus ? { focus: o.focus } : {}),
      ...(o.hooks ? { hooks: o.hooks } : {}),
      ...(o.fallback !== undefined ? { fallback: o.fallback } : {}),
      ...(o.audit !== undefined ? { audit: o.audit } : {}),
      ...(o.maxFailures !== undefined ? { maxFailures: o.maxFailures } : {}),
      ...(o.maxIneffective !== undefined ? { maxIneffective: o.maxIneffective } : {}),
      ...(o.prune !== undefined ? { prune: o.prune } : {}),
      // The loop goes on by itself: no synthetic "continue" message after the summary.
      autoContinue: false,
    })
    return new Conversation(`conversation-${++this.#count}`, session, auto)
  }

  /**
   * Before a model call: counts the call's system prompt and tools, compacts when the call would
   * not fit (or `shouldCompact` / `trigger` says so), and returns the messages to send when they
   * differ from the call's own (after a compaction or a prune), else `undefined`.
   */
  async prepare(c: Conversation, call: CallShape, signal?: AbortSignal): Promise<ModelMessageLike[] | undefined> {
    const o = this.#options
    const overhead: { system?: string[]; tools?: unknown } = {}
    if (call.system?.length) overhead.system = call.system
    if (call.tools !== undefined) overhead.tools = call.tools
    c.session.setOverhead(overhead)
    const usage = c.session.usage()
    const force =
      o.shouldCompact?.({ usage, messageCount: c.session.length, contextWindow: c.session.options.model.limit.context }) ??
      (o.trigger !== undefined && usage.tokens >= tokensOf(o.trigger, usage.usable))
    const step = await compacting.run(true, () => c.auto.afterStep({ ...(signal ? { signal } : {}), ...(force ? { force: true } : {}) }))
    if (step.pruned) c.rewritten = true
    if (step.compaction) this.#report(c, step.compaction)
    return c.rewritten ? c.hand() : undefined
  }

  #report(c: Conversation, result: CompactionResult): void {
    if (result.status === 'compacted') c.rewritten = true
    try {
      this.#options.onCompaction?.({ result, conversation: c.id })
    } catch {
      // A listener must not break the model call.
    }
  }
}
