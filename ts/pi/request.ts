// The agent's last model request in pi, for a summary sent as the agent's own conversation: pi's
// `context` event hands each call's messages to the extension, which keeps them as its handler
// passes them on (after contextfold's own prune and protected head), with the system prompt and
// tools pi 0.73 sends beside them (pi 0.74+ carries both in a leading system message). A summary
// sends them again, converted as pi converts them, then what the branch added since, then the
// instructions: the provider reads that prefix from its cache.
import { convertToLlm } from './convert.js'
import type { PiContext, PiConvertToLlm, PiEntry, PiExtensionAPI, PiExtensionContext, PiMessage, PiRequest, PiTool } from './types.js'

/**
 * One recorded call: the messages as sent, the newest message pi had (to find what followed), the
 * system prompt and tools, and the settings that are part of the provider's cache key.
 */
interface Recorded {
  sent: PiMessage[]
  newest: PiMessage | undefined
  systemPrompt?: string
  tools?: PiTool[]
  options: Record<string, unknown>
}

/** The same message: the object itself, or (a copy the prune made) the same role and time. */
function same(a: PiMessage, b: PiMessage): boolean {
  return a === b || (a.role === b.role && a.timestamp !== undefined && a.timestamp === b.timestamp)
}

/** The tools pi 0.73 sends beside the messages: the active ones, as the model reads them. */
export function activeTools(pi: PiExtensionAPI): PiTool[] | undefined {
  if (typeof pi.getAllTools !== 'function' || typeof pi.getActiveTools !== 'function') return undefined
  const active = new Set(pi.getActiveTools())
  const tools = pi.getAllTools().filter((t) => active.has(t.name))
  return tools.length ? tools.map(({ name, description, parameters }) => ({ name, description, parameters })) : undefined
}

/** The last request of each pi session (keyed by its session manager). */
export class LastRequests {
  readonly #bySession = new WeakMap<object, Recorded>()
  readonly #pi: PiExtensionAPI
  readonly #convert: PiConvertToLlm | undefined

  constructor(pi: PiExtensionAPI, convertToLlm?: PiConvertToLlm) {
    this.#pi = pi
    this.#convert = convertToLlm
  }

  /** Records a call: `received` as the `context` event gave it, `sent` as the handler passes it on. */
  record(ctx: PiExtensionContext, received: readonly PiMessage[], sent: readonly PiMessage[]): void {
    const key = ctx.sessionManager
    if (!key) return
    const r: Recorded = { sent: [...sent], newest: received.at(-1), options: {} }
    // pi sends the session id (OpenAI's prompt cache key; the faux model's cache) and the thinking level.
    const sessionId = key.getSessionId?.()
    if (sessionId) r.options.sessionId = sessionId
    const thinking = this.#pi.getThinkingLevel?.()
    if (ctx.model?.reasoning && thinking && thinking !== 'off') r.options.reasoning = thinking
    // pi 0.74+ sends them as a leading system message of `sent`.
    if (sent[0]?.role !== 'system') {
      const system = ctx.getSystemPrompt?.()
      if (system) r.systemPrompt = system
      const tools = activeTools(this.#pi)
      if (tools) r.tools = tools
    }
    this.#bySession.set(key, r)
  }

  /**
   * The prefix of a summary request in the conversation form: the last request as pi sent it, then
   * the branch's messages that followed it, converted as pi converts them, and the call's
   * settings. Undefined when no request of this branch was recorded, or a compaction came after it
   * (it is no longer the context).
   */
  async conversation(ctx: PiExtensionContext, branch: readonly PiEntry[]): Promise<PiRequest | undefined> {
    const r = ctx.sessionManager && this.#bySession.get(ctx.sessionManager)
    if (!r?.newest) return undefined
    const at = branch.findLastIndex((e) => e.type === 'message' && !!e.message && same(e.message as PiMessage, r.newest!))
    if (at < 0) return undefined
    const after = branch.slice(at + 1)
    if (after.some((e) => e.type === 'compaction' || e.type === 'branch_summary')) return undefined
    const since = after.flatMap((e) => (e.type === 'message' && e.message ? [e.message as PiMessage] : []))
    const convert = this.#convert ?? convertToLlm
    const context: PiContext = { messages: await convert([...r.sent, ...since]) }
    if (r.systemPrompt) context.systemPrompt = r.systemPrompt
    if (r.tools) context.tools = r.tools
    return { context, options: r.options }
  }
}
