// `contextfoldMiddleware`: context management for any AI SDK model, through
// `wrapLanguageModel({ model, middleware: contextfoldMiddleware(options) })` (ai v5, v6, v7). Each
// call's prompt is matched to its conversation; only what is new is appended to that
// conversation's native Session; when the call would not fit its model's window the conversation
// is compacted and the compacted prompt is sent, on this call and on every later one.
import { usageFromProvider, type ModelMessageLike } from '../native.js'
import { Breakpoints, providerOf, withOption } from './cache.js'
import { Engine, insideCompaction, type Conversation } from './conversations.js'
import type { ModelRef } from './models.js'
import type { ContextfoldAiOptions, PromptCacheOptions } from './options.js'

/** The part of a language model call's options the middleware reads. */
export interface CallOptionsLike {
  prompt: readonly unknown[]
  tools?: readonly unknown[]
  toolChoice?: unknown
  maxOutputTokens?: number
  abortSignal?: AbortSignal
  providerOptions?: Record<string, unknown>
}

/** The conversation id a call names: `providerOptions: { contextfold: { conversationId } }`. */
function conversationIdOf(params: CallOptionsLike): string | undefined {
  const id = (params.providerOptions?.contextfold as { conversationId?: unknown } | undefined)?.conversationId
  return typeof id === 'string' && id !== '' ? id : undefined
}

/** A language model call's tool choice (`{ type: 'auto' }`) as `generateText` takes it (`'auto'`). */
function callToolChoice(choice: unknown): unknown {
  const c = choice as { type?: unknown } | undefined
  return c?.type === 'auto' || c?.type === 'none' || c?.type === 'required' ? c.type : choice
}

/**
 * A language model middleware for ai v5 (`LanguageModelV2Middleware`), v6
 * (`LanguageModelV3Middleware`) and v7 (`LanguageModelMiddleware`): typed structurally so that it
 * fits the `ai` the app has.
 */
export interface ContextfoldMiddleware {
  /** ai v6 / v7. */
  readonly specificationVersion: 'v3'
  /** ai v5. */
  readonly middlewareVersion: 'v2'
  transformParams<P extends CallOptionsLike>(options: { type: 'generate' | 'stream'; params: P; model: ModelRef }): Promise<P>
  wrapGenerate<R extends { usage?: unknown }>(options: { doGenerate: () => PromiseLike<R>; params: CallOptionsLike; model: ModelRef }): Promise<R>
  wrapStream<S extends { stream: ReadableStream<unknown> }>(options: { doStream: () => PromiseLike<S>; params: CallOptionsLike; model: ModelRef }): Promise<S>
}

/** System messages at the head of a prompt, their texts, and the conversation after them. */
export function split(prompt: readonly unknown[]): { system: unknown[]; texts: string[]; messages: ModelMessageLike[] } {
  let i = 0
  const texts: string[] = []
  for (; i < prompt.length; i++) {
    const m = prompt[i] as ModelMessageLike
    if (m?.role !== 'system') break
    if (typeof m.content === 'string') texts.push(m.content)
  }
  return { system: prompt.slice(0, i), texts, messages: prompt.slice(i) as ModelMessageLike[] }
}

/**
 * Context management as a language model middleware. Options: the model's `contextWindow` (else
 * looked up in the model catalog), a `summarizer` (default: the offline extractive one; a summary
 * call made through a model wrapped with this middleware passes through it unchanged), `trigger` /
 * `keep` sizes (tokens or `{ fraction }` of the window), `shouldCompact`, `onCompaction`, and a
 * `store` (`fileStore(dir)`, a database store) so that a conversation survives a restart and its
 * compactions are shared by every process serving it; a call names its conversation with
 * `providerOptions: { contextfold: { conversationId } }`.
 *
 * @example
 * const model = wrapLanguageModel({ model: openai('gpt-4o'), middleware: contextfoldMiddleware() })
 */
export function contextfoldMiddleware(options: ContextfoldAiOptions & PromptCacheOptions = {}): ContextfoldMiddleware {
  const engine = new Engine(options, 'contextfoldMiddleware')
  const breakpoints = new Breakpoints(options.cacheBreakpoints)
  const cacheKey = options.promptCacheKey ?? false
  // The conversation of each call, for the usage its answer reports.
  const calls = new WeakMap<object, Conversation>()
  return {
    specificationVersion: 'v3',
    middlewareVersion: 'v2',
    async transformParams({ params, model }) {
      if (insideCompaction()) return params
      const { system, texts, messages } = split(params.prompt)
      if (!messages.length) return params
      // The call as the model gets it: a summary in the conversation form sends it again, then its instructions.
      const request = {
        messages: params.prompt as ModelMessageLike[],
        ...(params.tools ? { tools: params.tools } : {}),
        ...(params.toolChoice !== undefined ? { toolChoice: callToolChoice(params.toolChoice) } : {}),
        ...(params.providerOptions ? { providerOptions: params.providerOptions } : {}),
      }
      const call = {
        system: texts,
        request,
        ...(params.tools ? { tools: params.tools } : {}),
        ...(params.maxOutputTokens !== undefined ? { maxOutputTokens: params.maxOutputTokens } : {}),
      }
      const id = conversationIdOf(params)
      const prepared = await engine.call(messages, model, call, { ...(params.abortSignal ? { signal: params.abortSignal } : {}), ...(id !== undefined ? { id } : {}) })
      const c = prepared.conversation
      let next = prepared.messages ? { ...params, prompt: [...system, ...prepared.messages] } : { ...params }
      next = { ...next, prompt: breakpoints.apply(next.prompt, system, c, model) }
      const provider = providerOf(model)
      const openai = next.providerOptions?.openai as Record<string, unknown> | undefined
      if (cacheKey && provider.startsWith('openai') && openai?.promptCacheKey === undefined) {
        next = withOption(next, 'openai', 'promptCacheKey', typeof cacheKey === 'function' ? cacheKey(c.key) : c.key)
      }
      calls.set(next, c)
      return next
    },
    async wrapGenerate({ doGenerate, params }) {
      const result = await doGenerate()
      const c = calls.get(params)
      if (c) c.usage = usageFromProvider(result.usage, (result as { providerMetadata?: unknown }).providerMetadata)
      return result
    },
    async wrapStream({ doStream, params }) {
      const result = await doStream()
      const c = calls.get(params)
      if (!c) return result
      const stream = result.stream.pipeThrough(
        new TransformStream<unknown, unknown>({
          transform(chunk, controller) {
            const part = chunk as { type?: string; usage?: unknown; providerMetadata?: unknown }
            if (part?.type === 'finish') c.usage = usageFromProvider(part.usage, part.providerMetadata)
            controller.enqueue(chunk)
          },
        }),
      )
      return { ...result, stream }
    },
  }
}
