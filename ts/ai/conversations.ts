// The engine behind `contextfoldMiddleware` and `contextfoldPrepareStep`: one native Session per
// conversation, found from the messages of each call. A call appends only what is new (the
// native sync reads the first message and the window past what it holds), compacts through
// `AutoCompactor` when the call would not fit, and hands back the compacted messages from then on.
import { AsyncLocalStorage } from 'node:async_hooks'
import { createHash } from 'node:crypto'

import { Session, type ImportWarning, type ModelMessageLike, type ModelMessagesResult, type SessionOptions, type Usage } from '../native.js'
import { AutoCompactor, type AfterStepResult, type AutoCompactorState } from '../auto-compactor.js'
import { openLog, type SessionLog } from '../session-log.js'
import { telemetryFor } from '../telemetry.js'
import type { CompactionResult, LastRequest } from '../types.js'
import { lookUpModel, positiveTokens, type Asker, type ModelRef } from './models.js'
import { sessionOptions, tokensOf, type ContextfoldAiOptions } from './options.js'
import { summarizerModel } from './summarizer.js'

/** Set while a compaction of ours runs: a summary call made through a wrapped model passes as it is. */
const compacting = new AsyncLocalStorage<true>()

/** True inside a compaction this integration started (its summarizer's own model calls). */
export function insideCompaction(): boolean {
  return compacting.getStore() === true
}

/**
 * A stable digest of a message: binary data as base64, URLs as text; with `sortKeys` (matching
 * messages in memory), object keys in sorted order, since the session hands its messages back with
 * keys in its own order. Unsorted for a conversation's lasting name (a store's session id), which
 * must stay what it was.
 */
function digest(m: unknown, sortKeys = true): string {
  const json = JSON.stringify(m, (_k, v: unknown) => {
    if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')
    if (v instanceof ArrayBuffer) return Buffer.from(v).toString('base64')
    if (v instanceof URL) return v.href
    if (!sortKeys || typeof v !== 'object' || v === null || Array.isArray(v) || v instanceof Date) return v
    const sorted: Record<string, unknown> = {}
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k]
    return sorted
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
  /** The conversation's lasting name: the id a call gives, else `conversationId`, else a digest of its first message. */
  readonly key: string
  readonly session: Session
  readonly auto: AutoCompactor
  /** A compaction (or a prune) changed what the model is sent: hand back the session's messages. */
  rewritten = false
  handed: Handed | undefined
  /** Provider usage of the last call, put on the answer that arrives with the next call. */
  usage: Usage | undefined
  /** What `hand()` gave last, which the next one continues. */
  #held: readonly ModelMessageLike[] = []

  constructor(id: string, session: Session, auto: AutoCompactor, key = id) {
    this.id = id
    this.key = key
    this.session = session
    this.auto = auto
  }

  /** Whether `messages` continue what was handed back last. */
  continuesHanded(messages: readonly ModelMessageLike[]): boolean {
    const h = this.handed
    return !!h && messages.length >= h.length && digest(messages[0]) === h.first && digest(messages[h.length - 1]) === h.last
  }

  /**
   * The session's messages as the model gets them; remembered so that a loop carrying them forward
   * continues. Only what changed since the last hand-back is converted: the messages that stand
   * are the same objects as then. The array is the caller's (a loop may push onto it).
   */
  hand(): ModelMessageLike[] {
    const held = this.#held
    const { unchanged, messages } = this.session.handModelMessages(held.length)
    const out = (unchanged ? held.slice(0, unchanged).concat(messages) : messages) as unknown as ModelMessageLike[]
    this.#held = out
    this.handed = out.length ? { first: digest(out[0]), last: digest(out[out.length - 1]), length: out.length } : undefined
    return [...out]
  }
}

/** What the model call looks like besides its messages. */
export interface CallShape {
  system?: string[]
  tools?: unknown
  maxOutputTokens?: number
  /** The call as the model gets it (messages, system, tools, settings): the prefix of a summary request in the conversation form. */
  request?: LastRequest
  /** The model's window as the host reports it (LangChain's `model.profile`): wins over `contextWindow` and the catalog. */
  contextWindow?: number
}

/** Whether `summarizer` writes with `model` itself (an `aiSdkSummarizer` of the same provider and model id). */
function summarizesWith(summarizer: unknown, model: ModelRef): boolean {
  const own = summarizerModel(summarizer)
  if (!own) return false
  if (typeof model === 'string') return own.provider === undefined && own.modelId === model
  return own.provider === model.provider && own.modelId === model.modelId
}

/** What one model call gets from the engine. */
export interface Prepared {
  conversation: Conversation
  /** The messages to send instead of the call's own (after a compaction or a prune), else undefined. */
  messages?: ModelMessageLike[]
  /** The compaction this call ran, if any. */
  compaction?: CompactionResult
}

/** How a call reaches the engine besides its messages. */
export interface CallContext {
  signal?: AbortSignal
  /** The usage of the step whose answer the messages end with (prepareStep knows it). */
  stepUsage?: Usage
  /** The conversation's id, when the call names it (`providerOptions.contextfold.conversationId`). */
  id?: string
}

export class Engine {
  readonly #options: ContextfoldAiOptions
  /** Conversations by the digest of their first message, most recently used last. */
  readonly #byFirst = new Map<string, Conversation[]>()
  /** With a store: the last conversation of each id (its breaker state and pending usage), most recently used last. */
  readonly #stored = new Map<string, Conversation>()
  #count = 0
  readonly #asker: Asker
  readonly #integration: string

  /**
   * `name`: the function the user called (`contextfoldMiddleware`...), which errors name;
   * `integration`: the host, as telemetry names it.
   */
  constructor(options: ContextfoldAiOptions, name: string, integration = 'ai') {
    this.#integration = integration
    this.#asker = { name, fix: `${name}({ contextWindow })` }
    // A bad size is the user's call to fix now, not an error of the first model call.
    positiveTokens(this.#asker, 'contextWindow', options.contextWindow)
    positiveTokens(this.#asker, 'maxOutputTokens', options.maxOutputTokens)
    this.#options = options
  }

  /**
   * Before a model call: the conversation `messages` belong to, with what it did not hold yet
   * appended; compacted when the call would not fit. With a `store`, the conversation is loaded
   * from it and what the call changed is written back before this returns.
   */
  async call(messages: readonly ModelMessageLike[], model: ModelRef, call: CallShape, ctx: CallContext = {}): Promise<Prepared> {
    if (this.#options.store) {
      const stored = await this.#callStored(messages, model, call, ctx)
      if (stored) return stored
    }
    const c = await this.conversation(messages, model, call, ctx.stepUsage, ctx.id)
    const step = await this.#step(c, call, ctx.signal)
    const compaction = step.compaction ? { compaction: step.compaction } : {}
    return c.rewritten ? { conversation: c, messages: c.hand(), ...compaction } : { conversation: c, ...compaction }
  }

  /**
   * The conversation `messages` belong to, with the messages it did not hold yet appended (and
   * the previous call's usage, or `stepUsage`, on its answer). A new one when none holds a prefix
   * of them.
   */
  async conversation(messages: readonly ModelMessageLike[], model: ModelRef, call: CallShape, stepUsage?: Usage, id?: string): Promise<Conversation> {
    const first = digest(messages[0])
    const candidates = [...(this.#byFirst.get(first) ?? []), ...this.#handedFrom(first)]
    for (const c of candidates) {
      const reported = stepUsage ?? c.usage
      const usage = reported === undefined ? {} : { usage: reported }
      const r = c.continuesHanded(messages)
        ? c.session.appendModelMessages(messages.slice(c.handed!.length) as ModelMessageLike[], usage)
        : c.session.syncModelMessages(messages as ModelMessageLike[], usage)
      if (r.status === 'diverged') continue
      this.#took(c, r)
      c.usage = undefined
      this.#touch(first, c)
      return c
    }
    const session = new Session(await this.#sessionOptions(model, call))
    const key = id ?? this.#key(messages)
    const c = new Conversation(`conversation-${++this.#count}`, session, this.#compactor(session, model, key), key)
    this.#took(c, c.session.appendModelMessages(messages as ModelMessageLike[]))
    this.#touch(first, c)
    return c
  }

  /**
   * A call of a conversation kept in the store: open its log (waiting while another process
   * writes it), load it, continue where it is, compact if due, write what changed, close.
   * Undefined when the stored conversation is not the one the messages continue (then the call is
   * served from memory, and a warning says so).
   */
  async #callStored(messages: readonly ModelMessageLike[], model: ModelRef, call: CallShape, ctx: CallContext): Promise<Prepared | undefined> {
    const o = this.#options
    const handedBy = this.#handedFrom(digest(messages[0])).find((c) => c.continuesHanded(messages))
    const id = ctx.id ?? handedBy?.id ?? this.#key(messages)
    const log = await openLog(o.store!, id, ctx.signal)
    try {
      const previous = this.#stored.get(id)
      const session = await log.load(await this.#sessionOptions(model, call))
      const c = new Conversation(id, session, this.#compactor(session, model, id, previous?.auto.state))
      if (session.length > 0 && session.resumeModelMessages(messages as ModelMessageLike[]) === null) {
        this.#warn(c, [{ line: 0, message: `conversation ${JSON.stringify(id)}: the stored session is not continued by this call's messages (an edited history, or another conversation with the same id); served from memory, not stored` }])
        return undefined
      }
      const reported = ctx.stepUsage ?? previous?.usage
      const r = session.syncModelMessages(messages as ModelMessageLike[], reported === undefined ? {} : { usage: reported })
      this.#warn(c, r.warnings)
      for (const m of r.updated) await log.update(session.get(m)!)
      for (const m of r.appended) await log.append(session.get(m)!)
      const step = await this.#step(c, call, ctx.signal)
      await record(log, step)
      this.#remember(id, c)
      // The stored session is what the model gets: compacted, pruned or (round trip) the call's own.
      return { conversation: c, messages: c.hand(), ...(step.compaction ? { compaction: step.compaction } : {}) }
    } finally {
      await log.close()
    }
  }

  /** The name of the conversation `messages` start, when the call gives none. */
  #key(messages: readonly ModelMessageLike[]): string {
    return this.#options.conversationId?.(messages) ?? digest(messages[0], false)
  }

  #remember(id: string, c: Conversation): void {
    this.#stored.delete(id)
    this.#stored.set(id, c)
    const max = this.#options.maxConversations ?? 100
    for (const oldest of this.#stored.keys()) {
      if (this.#stored.size <= max) break
      this.#stored.delete(oldest)
    }
  }

  /** What an append took: its warnings reported; a tool output it cut (`toolOutputMaxChars`) means the model gets the session's messages from now on. */
  #took(c: Conversation, r: ModelMessagesResult): void {
    if (r.cut) c.rewritten = true
    this.#warn(c, r.warnings)
  }

  #warn(c: Conversation, warnings: readonly ImportWarning[]): void {
    if (!warnings.length || !this.#options.onWarning) return
    for (const w of warnings) {
      try {
        this.#options.onWarning({ warning: w, conversation: c.id })
      } catch {
        // A listener must not break the model call.
      }
    }
  }

  /** Conversations whose handed-back messages start with `first` (a loop that carried them forward). */
  #handedFrom(first: string): Conversation[] {
    const out: Conversation[] = []
    for (const list of this.#byFirst.values()) for (const c of list) if (c.handed?.first === first) out.push(c)
    for (const c of this.#stored.values()) if (c.handed?.first === first) out.push(c)
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

  async #sessionOptions(model: ModelRef, call: CallShape): Promise<SessionOptions> {
    const o = this.#options
    const window = call.contextWindow ?? o.contextWindow
    const info = await lookUpModel(model, { ...(window !== undefined ? { contextWindow: window } : {}) }, this.#asker)
    const maxOutput = call.maxOutputTokens ?? o.maxOutputTokens ?? Math.min(info.limit.output ?? 4_096, 32_000)
    return sessionOptions(o, { providerID: info.providerID, modelID: info.modelID, ...(info.cost ? { cost: info.cost } : {}) }, info.limit.context, maxOutput)
  }

  /** The conversation's compactor; `key` is its lasting name (its spans' `gen_ai.conversation.id`). */
  #compactor(session: Session, model: ModelRef, key: string, state?: AutoCompactorState): AutoCompactor {
    const o = this.#options
    // The agent's own model reads the summary request from its prompt cache; another model would not.
    const summaryInput = o.summaryInput ?? (summarizesWith(o.summarizer, model) ? 'conversation' : 'transcript')
    return new AutoCompactor(session, {
      summaryInput,
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
      ...(o.compactAt !== undefined ? { compactAt: o.compactAt } : {}),
      ...(state ? { state } : {}),
      telemetry: telemetryFor(o.telemetry, { integration: this.#integration, conversationId: key }),
      // The loop goes on by itself: no synthetic "continue" message after the summary.
      autoContinue: false,
    })
  }

  /**
   * Counts the call's system prompt and tools, then compacts when the call would not fit (or
   * `shouldCompact` / `trigger` says so). A prune or a compaction marks the conversation rewritten.
   */
  async #step(c: Conversation, call: CallShape, signal?: AbortSignal): Promise<AfterStepResult> {
    const o = this.#options
    const overhead: { system?: string[]; tools?: unknown } = {}
    if (call.system?.length) overhead.system = call.system
    if (call.tools !== undefined) overhead.tools = call.tools
    c.session.setOverhead(overhead)
    const usage = c.session.usage()
    const force =
      o.shouldCompact?.({ usage, messageCount: c.session.length, contextWindow: c.session.options.model.limit.context }) ??
      (o.trigger !== undefined && usage.tokens >= tokensOf(o.trigger, usage.usable))
    const step = await compacting.run(true, () =>
      c.auto.afterStep({ ...(signal ? { signal } : {}), ...(force ? { force: true } : {}), ...(call.request ? { lastRequest: call.request } : {}) }),
    )
    if (step.pruned) c.rewritten = true
    if (step.cut) {
      c.rewritten = true
      const n = step.cut.prunedPartIDs.length
      this.#warn(c, [
        {
          line: 0,
          message: `${n === 1 ? 'a tool output' : `${n} tool outputs`} the model had not read yet would not fit the window beside a summary: cut to fit (head and tail kept, ${step.cut.tokensFreed} tokens left out)`,
        },
      ])
    }
    if (step.compaction) this.#report(c, step.compaction)
    // The context as it stands now goes to the provider: the cache policy's next decision reads it.
    c.session.recordRequest()
    return step
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

/**
 * Writes what a step changed: the unread outputs cut to fit, the compaction's messages, then the
 * prune (the `cache` policy prunes the kept tail after compacting; an earlier prune marks outputs
 * that exist either way).
 */
async function record(log: SessionLog, step: AfterStepResult): Promise<void> {
  if (step.cut) await log.prune(step.cut)
  for (const m of step.compaction?.messages ?? []) await log.append(m)
  if (step.pruned) await log.prune(step.pruned)
}
