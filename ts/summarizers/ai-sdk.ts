// A summarizer over the AI SDK's `generateText`, for any `LanguageModel` (ai v5 and later). `ai` is an
// optional peer dependency: it is imported only when the summarizer runs.
import type { Usage } from '../../native.js'
import { SummaryFailedError, throwIfAborted } from '../errors.js'
import type { Summarizer, SummaryResponse } from '../types.js'

/**
 * An AI SDK `LanguageModel`: a provider model object (`openai('gpt-5-mini')`, a
 * `MockLanguageModelV2`...) or a gateway model id string. Typed structurally so that contextfold's
 * typings do not need `ai` installed.
 */
export type LanguageModelLike = string | { readonly specificationVersion: string; readonly provider: string; readonly modelId: string }

/** `generateText`'s shape, as far as this adapter uses it. */
export type GenerateTextLike = (options: Record<string, unknown>) => PromiseLike<unknown>

export interface AiSdkSummarizerOptions {
  /** Passed to `generateText` (the AI SDK retries 5xx and network errors itself; default 2). */
  maxRetries?: number
  temperature?: number
  providerOptions?: Record<string, unknown>
  headers?: Record<string, string>
  /** Any other `generateText` settings. */
  settings?: Record<string, unknown>
  /** Use this `generateText` instead of importing `ai` (another version, a wrapper). */
  generateText?: GenerateTextLike
}

type Json = Record<string, unknown>
const obj = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null ? (v as Json) : undefined)
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)

/** AI SDK usage (v5: `cachedInputTokens`, `reasoningTokens`; v6: `inputTokenDetails`, `outputTokenDetails`). */
export function usageFromAiSdk(u: unknown): Usage | undefined {
  const o = obj(u)
  if (!o) return undefined
  const input = num(o.inputTokens)
  const output = num(o.outputTokens)
  if (input === undefined && output === undefined) return undefined
  const usage: Usage = { input: input ?? 0, output: output ?? 0 }
  const total = num(o.totalTokens)
  const reasoning = num(o.reasoningTokens) ?? num(obj(o.outputTokenDetails)?.reasoningTokens)
  const cacheRead = num(o.cachedInputTokens) ?? num(obj(o.inputTokenDetails)?.cacheReadTokens)
  const cacheWrite = num(obj(o.inputTokenDetails)?.cacheWriteTokens)
  if (total !== undefined) usage.total = total
  if (reasoning !== undefined) usage.reasoning = reasoning
  if (cacheRead !== undefined) usage.cacheRead = cacheRead
  if (cacheWrite !== undefined) usage.cacheWrite = cacheWrite
  return usage
}

let loaded: Promise<GenerateTextLike> | undefined
async function loadGenerateText(): Promise<GenerateTextLike> {
  loaded ??= (async () => {
    const specifier = 'ai'
    let mod: Json
    try {
      mod = (await import(specifier)) as Json
    } catch (e) {
      loaded = undefined
      throw new SummaryFailedError('aiSdkSummarizer needs the `ai` package (AI SDK v5 or later): npm install ai', { cause: e })
    }
    const fn = mod.generateText
    if (typeof fn !== 'function') throw new SummaryFailedError('the installed `ai` package has no generateText')
    return fn as GenerateTextLike
  })()
  return loaded
}

/**
 * A summarizer calling `generateText({ model, system, prompt, maxOutputTokens, abortSignal })`.
 * Errors are the AI SDK's (`APICallError` with `statusCode`, `RetryError`...); `compact()` classifies
 * them (auth, network, server, prompt too long).
 */
export function aiSdkSummarizer(model: LanguageModelLike, options: AiSdkSummarizerOptions = {}): Summarizer {
  return async (req, signal): Promise<SummaryResponse> => {
    throwIfAborted(signal)
    const generateText = options.generateText ?? (await loadGenerateText())
    const call: Json = {
      ...options.settings,
      model,
      system: req.system,
      prompt: req.prompt,
      maxOutputTokens: req.maxOutputTokens,
    }
    if (signal) call.abortSignal = signal
    if (options.maxRetries !== undefined) call.maxRetries = options.maxRetries
    if (options.temperature !== undefined) call.temperature = options.temperature
    if (options.providerOptions) call.providerOptions = options.providerOptions
    if (options.headers) call.headers = options.headers
    const result = obj(await generateText(call))
    throwIfAborted(signal)
    if (!result) throw new SummaryFailedError('generateText returned nothing')
    const out: SummaryResponse = { text: typeof result.text === 'string' ? result.text : '' }
    if (typeof result.finishReason === 'string') out.finishReason = result.finishReason
    const usage = usageFromAiSdk(result.usage)
    if (usage) out.usage = usage
    const m = typeof model === 'string' ? undefined : model
    const modelID = obj(result.response)?.modelId
    const id = typeof modelID === 'string' && modelID ? modelID : typeof model === 'string' ? model : m?.modelId
    if (id) out.model = { providerID: m?.provider ?? 'ai-sdk', modelID: id }
    return out
  }
}
