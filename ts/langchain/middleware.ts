// `contextfoldLangChain`: context management for a LangChain.js v1 agent, as a `createMiddleware`
// middleware. In `wrapModelCall` the request's messages go to the thread's native Session (only what
// is new), the system prompt and the tools are counted, the newest answer's `usage_metadata`
// calibrates the count; when the call would not fit, the thread is compacted, and the model is
// handed a new array (the summary, then the kept tail; pruned tool outputs). The state and the
// checkpoint keep every message, unless `checkpoint: 'compact'` asks for the checkpoint to shrink.
import { createMiddleware } from 'langchain'
import { RemoveMessage, type BaseMessage } from '@langchain/core/messages'
import { convertToOpenAITool } from '@langchain/core/utils/function_calling'

import { Engine } from '../ai/conversations.js'
import type { ModelRef } from '../ai/models.js'
import type { ContextfoldAiOptions } from '../ai/options.js'
import { fromModelMessages, toModelMessages, typeOf, type ConvertState, type HandBackState } from './messages.js'

/** The id LangGraph's `messages` reducer reads as "remove every message" (`REMOVE_ALL_MESSAGES`). */
const REMOVE_ALL = '__remove_all__'

export interface ContextfoldLangChainOptions extends Omit<ContextfoldAiOptions, 'conversationId'> {
  /**
   * What the checkpoint holds. `'keep'` (default): every message; the model gets the compacted
   * view on each call. `'compact'`: after a compaction whose summary the summarizer wrote (not
   * the fallback), the next model call replaces the thread's messages in the checkpoint with the
   * summary and the messages kept after it (a `RemoveMessage` of all, as LangChain's
   * `summarizationMiddleware` does).
   */
  checkpoint?: 'keep' | 'compact'
  /**
   * The thread a call belongs to. Default: `runtime.configurable.thread_id`, else a digest of the
   * first message.
   */
  threadId?: (request: { messages: readonly BaseMessage[]; runtime: unknown }) => string | undefined
}

/** What contextfold reads of a LangChain chat model. */
interface ChatModelLike {
  profile?: { maxInputTokens?: number; maxOutputTokens?: number }
  maxTokens?: unknown
  model?: unknown
  modelName?: unknown
  _llmType?: () => string
}

/** The catalog name of a chat model: its provider (`_llmType()`) and model id. */
function modelRef(model: ChatModelLike): ModelRef {
  const id = typeof model.model === 'string' ? model.model : typeof model.modelName === 'string' ? model.modelName : undefined
  let provider = 'langchain'
  try {
    provider = model._llmType?.() ?? provider
  } catch {
    // A model without a type name: the window comes from the options.
  }
  return { provider, modelId: id ?? provider }
}

const positive = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined)

/** Tool definitions as the provider receives them (OpenAI function form), converted once per tool. */
const definitions = new WeakMap<object, unknown>()
function toolDefinitions(tools: readonly unknown[]): unknown[] {
  return tools.map((t) => {
    if (typeof t !== 'object' || t === null) return t
    let d = definitions.get(t)
    if (d === undefined) {
      try {
        d = convertToOpenAITool(t as Parameters<typeof convertToOpenAITool>[0])
      } catch {
        // A provider's server tool: counted as it is.
        d = t
      }
      definitions.set(t, d)
    }
    return d
  })
}

/** The checkpoint's replacement after a compaction, put in place by the next model call. */
interface Shrink {
  /** Messages of the request it was made from; the next call's state starts with them. */
  length: number
  lastId: string | undefined
  messages: BaseMessage[]
}

/**
 * Context management for `createAgent`: `middleware: [contextfoldLangChain({ contextWindow })]`.
 * Options are the AI SDK middleware's (`contextWindow`, `summarizer`, `trigger`, `keep`, `prune`,
 * `store`, `telemetry`...), plus `checkpoint` and `threadId`. The window is the model's
 * `profile.maxInputTokens` when it has one, else `contextWindow`, else the catalog's. With a
 * `store` (`fileStore(dir)`, a database store) each thread's summary and cursor are kept under
 * its thread id, so that a thread resumed in another process continues from its compaction.
 *
 * @example
 * const agent = createAgent({ model, tools, middleware: [contextfoldLangChain({ contextWindow: 32_000 })], checkpointer })
 */
export function contextfoldLangChain(options: ContextfoldLangChainOptions = {}) {
  const { checkpoint = 'keep', threadId, ...rest } = options
  const engine = new Engine(rest, 'contextfoldLangChain', 'langchain')
  const shrinks = new Map<string, Shrink>()
  // Each thread's last conversion: the next call converts only what follows it.
  const conversions = new Map<string, ConvertState>()
  // Each thread's last hand-back: the next call maps only what changed.
  const handBacks = new Map<string, HandBackState>()
  /** Sets `id` in `map`, most recently used last, and drops the least recently used past `maxConversations`. */
  const remember = <V>(map: Map<string, V>, id: string, value: V) => {
    map.delete(id)
    map.set(id, value)
    const max = rest.maxConversations ?? 100
    for (const oldest of map.keys()) {
      if (map.size <= max) break
      map.delete(oldest)
    }
  }
  const threadOf = (messages: readonly BaseMessage[], runtime: unknown): string | undefined => {
    if (threadId) return threadId({ messages, runtime })
    const id = (runtime as { configurable?: { thread_id?: unknown } } | undefined)?.configurable?.thread_id
    return typeof id === 'string' && id !== '' ? id : typeof id === 'number' ? String(id) : undefined
  }
  return createMiddleware({
    name: 'contextfold',
    ...(checkpoint === 'compact'
      ? {
          beforeModel: (state: { messages: BaseMessage[] }, runtime: unknown) => {
            const id = threadOf(state.messages, runtime)
            const s = id === undefined ? undefined : shrinks.get(id)
            if (!s) return undefined
            shrinks.delete(id!)
            const messages = state.messages
            if (messages.length < s.length || messages[s.length - 1]?.id !== s.lastId) return undefined
            return { messages: [new RemoveMessage({ id: REMOVE_ALL }), ...s.messages, ...messages.slice(s.length)] }
          },
        }
      : {}),
    wrapModelCall: async (request, handler) => {
      const id = threadOf(request.messages, request.runtime)
      if (!request.messages.length) return handler(request)
      const state = toModelMessages(request.messages, id === undefined ? undefined : conversions.get(id))
      const converted = state.converted
      if (!converted.messages.length) return handler(request)
      if (id !== undefined) remember(conversions, id, state)
      const model = request.model as unknown as ChatModelLike
      const system: string[] = []
      const own = request.systemMessage?.text
      if (own) system.push(own)
      for (const m of converted.system) system.push(typeof m.content === 'string' ? m.content : m.text)
      const tools = request.tools?.length ? toolDefinitions(request.tools) : undefined
      const window = positive(model.profile?.maxInputTokens)
      const maxOutput = positive(model.maxTokens)
      const signal = (request.runtime as { signal?: AbortSignal } | undefined)?.signal
      const prepared = await engine.call(
        converted.messages,
        modelRef(model),
        {
          system,
          ...(tools ? { tools } : {}),
          ...(window !== undefined ? { contextWindow: window } : {}),
          ...(maxOutput !== undefined ? { maxOutputTokens: maxOutput } : {}),
        },
        { ...(signal ? { signal } : {}), ...(id !== undefined ? { id } : {}), ...(converted.usage ? { stepUsage: converted.usage } : {}) },
      )
      // A new array always: `request.messages` is the state's own, which the checkpoint stores.
      let messages: BaseMessage[]
      if (prepared.messages) {
        const back = fromModelMessages(prepared.messages, converted, id === undefined ? undefined : handBacks.get(id))
        if (id !== undefined) remember(handBacks, id, back.state)
        messages = back.messages
      } else messages = [...request.messages]
      const c = prepared.compaction
      if (checkpoint === 'compact' && id !== undefined && c?.status === 'compacted' && !c.fallback) {
        remember(shrinks, id, { length: request.messages.length, lastId: request.messages.at(-1)?.id, messages: originals(messages, request.messages) })
      }
      return handler({ ...request, messages })
    },
  })
}

/**
 * What the checkpoint keeps after a compaction: the view's messages, each the request's original
 * where the view holds a pruned copy (the checkpoint keeps outputs whole; pruning is per call).
 */
function originals(view: readonly BaseMessage[], request: readonly BaseMessage[]): BaseMessage[] {
  const byId = new Map<string, BaseMessage>()
  for (const m of request) if (m.id) byId.set(`${typeOf(m)}:${m.id}`, m)
  return view.map((m) => (m.id ? (byId.get(`${typeOf(m)}:${m.id}`) ?? m) : m))
}
