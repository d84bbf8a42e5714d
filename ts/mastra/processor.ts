// `contextfoldProcessor`: context management for a Mastra agent, as an input processor. It reads
// the step's thread, tools and output limit in `processInputStep` (returning nothing, so Mastra
// stores nothing of it) and rewrites only the provider prompt in `processLLMRequest` (the AI SDK v5
// prompt, which Mastra never writes back): memory keeps every message, the model gets the
// compacted conversation. The engine is the AI SDK middleware's (one native Session per thread).
import { usageFromProvider, type ModelMessageLike } from '../native.js'
import { Breakpoints } from '../ai/cache.js'
import { Engine, insideCompaction } from '../ai/conversations.js'
import type { ModelRef } from '../ai/models.js'
import type { ContextfoldAiOptions, PromptCacheOptions } from '../ai/options.js'
import { split } from '../ai/middleware.js'
import { toolDefinitions } from '../ai/prepare-step.js'

/** Options of `contextfoldProcessor`: the AI SDK middleware's, with `store` keyed by the Mastra thread id. */
export interface ContextfoldProcessorOptions extends ContextfoldAiOptions, Pick<PromptCacheOptions, 'cacheBreakpoints'> {
  /** The processor's id in Mastra (default `'contextfold'`). */
  id?: string
}

/** What `processInputStep` is called with, as far as the processor reads it (`@mastra/core` 1.x). */
export interface InputStepArgsLike {
  state: Record<string, unknown>
  tools?: Record<string, unknown>
  modelSettings?: { maxOutputTokens?: number }
  requestContext?: { get(key: string): unknown }
  messageList?: { serialize?(): unknown }
}

/** What `processLLMRequest` is called with, as far as the processor reads it (`@mastra/core` 1.x). */
export interface LLMRequestArgsLike<P extends readonly unknown[]> {
  prompt: P
  model: unknown
  state: Record<string, unknown>
  steps?: readonly { usage?: unknown; providerMetadata?: unknown }[]
  abortSignal?: AbortSignal
}

/**
 * A Mastra input processor (`Processor` of `@mastra/core`), typed structurally so that contextfold's
 * typings do not need Mastra installed: it fits `new Agent({ inputProcessors: [...] })`.
 */
export interface ContextfoldProcessor {
  readonly id: string
  readonly name: string
  processInputStep(args: InputStepArgsLike): void
  processLLMRequest<P extends readonly unknown[]>(args: LLMRequestArgsLike<P>): Promise<{ prompt: P } | undefined>
}

/** What `processInputStep` leaves for `processLLMRequest` of the same step. */
interface Gathered {
  thread?: string
  tools?: unknown
  maxOutputTokens?: number
}

const STATE = 'contextfold'

/** The thread of the call: Mastra's memory context, else the message list's memory info. */
function threadOf(args: InputStepArgsLike): string | undefined {
  const memory = args.requestContext?.get?.('MastraMemory') as { thread?: { id?: unknown } } | undefined
  const id = memory?.thread?.id
  if (typeof id === 'string' && id) return id
  const info = (args.messageList?.serialize?.() as { memoryInfo?: { threadId?: unknown } } | undefined)?.memoryInfo
  return typeof info?.threadId === 'string' && info.threadId ? info.threadId : undefined
}

/**
 * The model a prompt goes to, as the catalog is asked: a resolved model (`provider`, `modelId`;
 * what Mastra makes of a router id such as `'openai/gpt-5'`), a router id, or an OpenAI-compatible
 * config (`{ id: 'openai/gpt-5', url }` or `{ providerId, modelId }`).
 */
function modelRef(model: unknown): ModelRef {
  if (typeof model === 'string') return model
  const m = model as { provider?: unknown; modelId?: unknown; providerId?: unknown; id?: unknown } | undefined
  if (typeof m?.modelId === 'string') {
    const provider = typeof m.provider === 'string' ? m.provider : typeof m.providerId === 'string' ? m.providerId : undefined
    return provider ? { provider, modelId: m.modelId } : m.modelId
  }
  if (typeof m?.id === 'string') return m.id
  return model as ModelRef
}

/**
 * Context management as a Mastra input processor. Each model call's prompt (system prompt and
 * tools counted) is matched to its thread's conversation; only what is new is taken; when the call
 * would not fit the model's window the conversation is compacted (summary + the newest messages
 * verbatim, old tool output pruned first) and the compacted prompt is sent, on this call and every
 * later one. Mastra's memory is never written: it keeps every message. The window comes from
 * `contextWindow`, else the model catalog (router ids such as `'openai/gpt-5'` included). With a
 * `store` (`fileStore(dir)`, a database store) the thread's summary and cursor survive a
 * restart and are shared by every process serving it: the store's session id is the thread id.
 *
 * @example
 * const agent = new Agent({ id: 'coder', name: 'coder', instructions, model: 'openai/gpt-5', tools, memory,
 *   inputProcessors: [contextfoldProcessor({ store: fileStore('.sessions') })] })
 */
export function contextfoldProcessor(options: ContextfoldProcessorOptions = {}): ContextfoldProcessor {
  const engine = new Engine(options, 'contextfoldProcessor', 'mastra')
  const breakpoints = new Breakpoints(options.cacheBreakpoints)
  const id = options.id ?? 'contextfold'
  return {
    id,
    name: 'contextfold',
    processInputStep(args) {
      const g: Gathered = {}
      const thread = threadOf(args)
      if (thread !== undefined) g.thread = thread
      if (args.tools && Object.keys(args.tools).length) g.tools = toolDefinitions(args.tools)
      const max = args.modelSettings?.maxOutputTokens
      if (typeof max === 'number' && max > 0) g.maxOutputTokens = max
      args.state[STATE] = g
      // Nothing returned: what Mastra persists stays as it is.
    },
    async processLLMRequest<P extends readonly unknown[]>(args: LLMRequestArgsLike<P>): Promise<{ prompt: P } | undefined> {
      if (insideCompaction()) return undefined
      const { system, texts, messages } = split(args.prompt)
      if (!messages.length) return undefined
      const g = (args.state[STATE] ?? {}) as Gathered
      const model = modelRef(args.model)
      const request = { messages: args.prompt as unknown as ModelMessageLike[], ...(g.tools !== undefined ? { tools: g.tools } : {}) }
      const call = {
        system: texts,
        request,
        ...(g.tools !== undefined ? { tools: g.tools } : {}),
        ...(g.maxOutputTokens !== undefined ? { maxOutputTokens: g.maxOutputTokens } : {}),
      }
      const last = args.steps?.at(-1)
      const stepUsage = last && usageFromProvider(last.usage, last.providerMetadata)
      const prepared = await engine.call(messages, model, call, {
        ...(args.abortSignal ? { signal: args.abortSignal } : {}),
        ...(stepUsage !== undefined ? { stepUsage } : {}),
        ...(g.thread !== undefined ? { id: g.thread } : {}),
      })
      const base = prepared.messages ? [...system, ...prepared.messages] : args.prompt
      const marked = breakpoints.apply(base, system, prepared.conversation, model)
      if (marked === args.prompt) return undefined
      return { prompt: marked as unknown as P }
    },
  }
}
