// A summarizer over the AI SDK's `generateText`, for any `LanguageModel` of ai v5, v6 or v7. It
// uses the app's own `ai` (the `generateText` passed in, or the `ai` package the app has installed),
// never a copy of contextfold's: a model object only works with the `ai` major that made it.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

import { usageFromProvider, type ModelMessageLike } from '../native.js'
import { isAnthropic, MAX_BREAKPOINTS, withOption } from './cache.js'
import { SummaryFailedError, UnsupportedModelError, throwIfAborted } from '../errors.js'
import type { Summarizer, SummaryRequest, SummaryResponse } from '../types.js'

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

/** What the summarizer uses of the app's `ai`. */
interface AppAi {
  generateText: Call
  /** `jsonSchema()`, to send tool definitions given as JSON schemas (a middleware's call options). */
  jsonSchema?: (schema: unknown) => unknown
}

const loaded = new Map<string, Promise<AppAi>>()

/** The app's `ai`: `node_modules/ai` in `from` or the nearest folder above it. */
function appAi(from: string): Promise<AppAi> {
  let promise = loaded.get(from)
  if (!promise) {
    promise = (async () => {
      for (let dir = from; ; dir = dirname(dir)) {
        const manifest = join(dir, 'node_modules', 'ai', 'package.json')
        if (existsSync(manifest)) {
          const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as Json
          const mod = (await import(pathToFileURL(join(dirname(manifest), entryOf(pkg) ?? 'index.js')).href)) as Json
          const pick = (name: string) => mod[name] ?? obj(mod.default)?.[name]
          const fn = pick('generateText')
          if (typeof fn !== 'function') throw new UnsupportedModelError(`the \`ai\` package at ${dirname(manifest)} has no generateText`)
          const schema = pick('jsonSchema')
          return { generateText: fn as Call, ...(typeof schema === 'function' ? { jsonSchema: schema as AppAi['jsonSchema'] } : {}) }
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

/**
 * The agent's tools as `generateText` takes them, without `execute`: the definitions the provider
 * gets stay the same, and a tool call in the summary's answer is never run. Tools given as a
 * language model call's function tools (`{ type: 'function', name, inputSchema }[]`, what a
 * middleware sees) become a tool set through the app's `jsonSchema`.
 */
async function toolSet(tools: unknown, from: string): Promise<unknown> {
  if (Array.isArray(tools)) {
    // Without the app's `ai` (a `generateText` passed in from elsewhere) the summary goes without tools: a cache miss, not a failure.
    const jsonSchema = await appAi(from).then((a) => a.jsonSchema, () => undefined)
    if (!jsonSchema) return undefined
    const out: Json = {}
    for (const t of tools as Json[]) {
      if (t?.type !== 'function' || typeof t.name !== 'string') continue
      out[t.name] = { description: t.description, inputSchema: jsonSchema(t.inputSchema), ...(t.providerOptions ? { providerOptions: t.providerOptions } : {}) }
    }
    return out
  }
  const set = obj(tools)
  if (!set) return undefined
  return Object.fromEntries(Object.entries(set).map(([name, t]) => [name, { ...obj(t), execute: undefined }]))
}

/**
 * Anthropic reads its cache only up to a breakpoint of the request: the last message the agent's
 * last request sent (`cached`) gets one, unless the request already has the most it allows. What
 * follows is billed as plain input, not written to the cache: no later request reads it.
 */
function readBack(messages: readonly ModelMessageLike[], cached: number, model: LanguageModelLike): readonly ModelMessageLike[] {
  const end = Math.min(cached, messages.length - 1) - 1
  if (end < 0 || !isAnthropic(model)) return messages
  const marked = (m: ModelMessageLike) => JSON.stringify(m).includes('"cacheControl"')
  if (marked(messages[end]!) || messages.filter(marked).length >= MAX_BREAKPOINTS) return messages
  const out = [...messages]
  out[end] = withOption(messages[end]!, 'anthropic', 'cacheControl', { type: 'ephemeral' })
  return out
}

/** The `generateText` settings of a summary request: the transcript form, or the agent's own conversation. */
async function requestSettings(req: SummaryRequest, from: string, model: LanguageModelLike): Promise<Json> {
  if (req.input !== 'conversation' || !req.messages) return { system: req.system, prompt: req.prompt }
  const r = req.request ?? {}
  const out: Json = { messages: readBack(req.messages, req.cachedMessages ?? req.messages.length - 1, model) }
  if (r.system) out.system = r.system
  if (r.tools !== undefined) {
    const tools = await toolSet(r.tools, from)
    if (tools !== undefined) out.tools = tools
  }
  if (r.toolChoice !== undefined) out.toolChoice = r.toolChoice
  if (r.providerOptions) out.providerOptions = r.providerOptions
  return out
}

const MODEL = Symbol.for('contextfold.aiSdkSummarizer.model')

/** The model an `aiSdkSummarizer` writes with (`provider` / `modelId`, or a gateway id), if `s` is one. */
/** A `generateText`-shaped answer (`text`, `finishReason`, `usage`) as a summary; `what` names the call. */
export function summaryOf(answer: Json | undefined, what: string): SummaryResponse {
  if (!answer) throw new SummaryFailedError(`${what} returned nothing`)
  const out: SummaryResponse = { text: typeof answer.text === 'string' ? answer.text : '' }
  if (typeof answer.finishReason === 'string') out.finishReason = answer.finishReason
  const usage = usageFromProvider(answer.usage, answer.providerMetadata)
  if (usage) out.usage = usage
  return out
}

export function summarizerModel(s: unknown): { provider?: string; modelId: string } | undefined {
  return typeof s === 'function' ? ((s as unknown as Record<symbol, { provider?: string; modelId: string } | undefined>)[MODEL] ?? undefined) : undefined
}

/** An AI SDK error saying the model object is of a specification this `ai` cannot call. */
function unsupportedModel(e: unknown): boolean {
  const o = obj(e)
  return !!o && (o.name === 'AI_UnsupportedModelVersionError' || (typeof o.message === 'string' && /unsupported model version/i.test(o.message)))
}

/**
 * A summarizer calling `generateText({ model, system, prompt, maxOutputTokens, abortSignal })` of the
 * app's `ai`; with `req.input === 'conversation'`, `generateText({ model, messages, system?, tools?,
 * toolChoice?, providerOptions? })` from `req.messages` and `req.request` (tools without
 * `execute`). Errors are the AI SDK's (`APICallError` with `statusCode`, `RetryError`...), which
 * `compact()` classifies (auth, network, server, prompt too long); a model this `ai` cannot call is
 * an `UnsupportedModelError` (`CF_UNSUPPORTED_MODEL`), which no fallback hides.
 */
export function aiSdkSummarizer(model: LanguageModelLike, options: AiSdkSummarizerOptions = {}): Summarizer {
  const summarizer: Summarizer = async (req, signal): Promise<SummaryResponse> => {
    throwIfAborted(signal)
    const from = options.from ?? process.cwd()
    const generateText = (options.generateText as Call | undefined) ?? (await appAi(from)).generateText
    const settings = await requestSettings(req, from, model)
    const call: Json = { ...options.settings, model, ...settings, maxOutputTokens: req.maxOutputTokens }
    if (signal) call.abortSignal = signal
    if (options.maxRetries !== undefined) call.maxRetries = options.maxRetries
    if (options.temperature !== undefined) call.temperature = options.temperature
    if (options.providerOptions) call.providerOptions = { ...obj(settings.providerOptions), ...options.providerOptions }
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
    const out = summaryOf(result, 'generateText')
    const m = typeof model === 'string' ? undefined : model
    const modelID = obj(result!.response)?.modelId
    const id = typeof modelID === 'string' && modelID ? modelID : typeof model === 'string' ? model : m?.modelId
    if (id) out.model = { providerID: m?.provider ?? 'ai-sdk', modelID: id }
    return out
  }
  const named = typeof model === 'string' ? { modelId: model } : { provider: model.provider, modelId: model.modelId }
  Object.defineProperty(summarizer, MODEL, { value: named })
  return summarizer
}
