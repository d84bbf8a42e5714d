// A summarizer over the AI SDK's `generateText`, for any `LanguageModel` of ai v5, v6 or v7. It
// uses the app's own `ai` (the `generateText` passed in, or the `ai` package the app has installed),
// never a copy of contextfold's: a model object only works with the `ai` major that made it.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

import { usageFromProvider } from '../../native.js'
import { SummaryFailedError, UnsupportedModelError, throwIfAborted } from '../errors.js'
import type { Summarizer, SummaryResponse } from '../types.js'

/**
 * An AI SDK `LanguageModel`: a provider model object (`openai('gpt-5-mini')`, a
 * `MockLanguageModelV2`...) or a gateway model id string. Typed structurally so that contextfold's
 * typings do not need `ai` installed.
 */
export type LanguageModelLike = string | { readonly specificationVersion: string; readonly provider: string; readonly modelId: string }

/**
 * The AI SDK's `generateText` of any major (v5, v6, v7): a function returning a promise of a result
 * with `text`. Its options are the app's own type; this adapter passes `model`, `system`, `prompt`,
 * `maxOutputTokens`, `abortSignal` and the settings given.
 */
export type GenerateTextLike = (options: never) => PromiseLike<{ readonly text: string }>

export interface AiSdkSummarizerOptions {
  /** Passed to `generateText` (the AI SDK retries 5xx and network errors itself; default 2). */
  maxRetries?: number
  temperature?: number
  providerOptions?: Record<string, unknown>
  headers?: Record<string, string>
  /** Any other `generateText` settings. */
  settings?: Record<string, unknown>
  /**
   * The app's `generateText` (`import { generateText } from 'ai'`). Without it, the `ai` package is
   * found from `from` (default: the working directory) upwards, as the app's own imports find it.
   */
  generateText?: GenerateTextLike
  /** Where the app's `ai` is looked for when `generateText` is not given (default `process.cwd()`). */
  from?: string
}

type Json = Record<string, unknown>
type Call = (options: Json) => PromiseLike<unknown>
const obj = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null ? (v as Json) : undefined)

/** The file a package's `exports['.']` names for `import` (conditions in Node's order of preference). */
function entryOf(pkg: Json): string | undefined {
  const pick = (e: unknown): string | undefined => {
    if (typeof e === 'string') return e
    const o = obj(e)
    if (!o) return undefined
    for (const c of ['node', 'import', 'module', 'default']) {
      const found = c in o ? pick(o[c]) : undefined
      if (found) return found
    }
    return undefined
  }
  const exp = obj(pkg.exports)
  const dot = exp && '.' in exp ? exp['.'] : pkg.exports
  return pick(dot) ?? (typeof pkg.module === 'string' ? pkg.module : undefined) ?? (typeof pkg.main === 'string' ? pkg.main : 'index.js')
}

const loaded = new Map<string, Promise<Call>>()

/** The app's `generateText`: `node_modules/ai` in `from` or the nearest folder above it. */
function appGenerateText(from: string): Promise<Call> {
  let promise = loaded.get(from)
  if (!promise) {
    promise = (async () => {
      for (let dir = from; ; dir = dirname(dir)) {
        const manifest = join(dir, 'node_modules', 'ai', 'package.json')
        if (existsSync(manifest)) {
          const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as Json
          const mod = (await import(pathToFileURL(join(dirname(manifest), entryOf(pkg) ?? 'index.js')).href)) as Json
          const fn = mod.generateText ?? obj(mod.default)?.generateText
          if (typeof fn !== 'function') throw new UnsupportedModelError(`the \`ai\` package at ${dirname(manifest)} has no generateText`)
          return fn as Call
        }
        if (dirname(dir) === dir) break
      }
      throw new UnsupportedModelError(
        `aiSdkSummarizer found no \`ai\` package from ${from}: install it in the app (npm install ai) or pass \`generateText\``,
      )
    })()
    promise.catch(() => loaded.delete(from))
    loaded.set(from, promise)
  }
  return promise
}

/** An AI SDK error saying the model object is of a specification this `ai` cannot call. */
function unsupportedModel(e: unknown): boolean {
  const o = obj(e)
  return !!o && (o.name === 'AI_UnsupportedModelVersionError' || (typeof o.message === 'string' && /unsupported model version/i.test(o.message)))
}

/**
 * A summarizer calling `generateText({ model, system, prompt, maxOutputTokens, abortSignal })` of the
 * app's `ai`. Errors are the AI SDK's (`APICallError` with `statusCode`, `RetryError`...), which
 * `compact()` classifies (auth, network, server, prompt too long); a model this `ai` cannot call is
 * an `UnsupportedModelError` (`CF_UNSUPPORTED_MODEL`), which no fallback hides.
 */
export function aiSdkSummarizer(model: LanguageModelLike, options: AiSdkSummarizerOptions = {}): Summarizer {
  return async (req, signal): Promise<SummaryResponse> => {
    throwIfAborted(signal)
    const generateText = (options.generateText as Call | undefined) ?? (await appGenerateText(options.from ?? process.cwd()))
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
    let answer: unknown
    try {
      answer = await generateText(call)
    } catch (e) {
      if (unsupportedModel(e)) {
        const spec = typeof model === 'string' ? 'a model id' : `a ${model.specificationVersion} model`
        throw new UnsupportedModelError(`the app's \`ai\` cannot call ${spec}: use a provider package made for the same \`ai\` major`, { cause: e })
      }
      throw e
    }
    const result = obj(answer)
    throwIfAborted(signal)
    if (!result) throw new SummaryFailedError('generateText returned nothing')
    const out: SummaryResponse = { text: typeof result.text === 'string' ? result.text : '' }
    if (typeof result.finishReason === 'string') out.finishReason = result.finishReason
    const usage = usageFromProvider(result.usage)
    if (usage) out.usage = usage
    const m = typeof model === 'string' ? undefined : model
    const modelID = obj(result.response)?.modelId
    const id = typeof modelID === 'string' && modelID ? modelID : typeof model === 'string' ? model : m?.modelId
    if (id) out.model = { providerID: m?.provider ?? 'ai-sdk', modelID: id }
    return out
  }
}
