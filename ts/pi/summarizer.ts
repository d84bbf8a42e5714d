// A summarizer calling the pi session's own model through pi-ai: pi 0.87's model registry streams
// itself (`streamSimple`); on 0.73 pi-ai's `complete` is called with the registry's credentials. In
// the conversation form it sends the agent's last request, then the instructions.
import { usageFromProvider } from '../native.js'
import { AuthError, SummaryFailedError, UnknownModelError, abortError, throwIfAborted } from '../errors.js'
import type { Summarizer, SummaryRequest, SummaryResponse } from '../types.js'
import type { PiAssistantMessage, PiComplete, PiContext, PiExtensionContext, PiModel, PiRequest } from './types.js'

// A variable, so that TypeScript does not resolve it and bundlers leave it to pi's loader.
const PI_AI = '@mariozechner/pi-ai'

let piAi: Promise<PiComplete> | undefined

/** pi-ai's `completeSimple`, as pi's extension loader resolves `@mariozechner/pi-ai` (its own copy). */
function loadComplete(): Promise<PiComplete> {
  piAi ??= import(PI_AI).then(
    (mod: Record<string, unknown>) => {
      const fn = mod.completeSimple ?? mod.complete
      if (typeof fn !== 'function') throw new SummaryFailedError(`${PI_AI} has no completeSimple`)
      return fn as PiComplete
    },
    (e: unknown) => {
      piAi = undefined
      throw new SummaryFailedError(`cannot load ${PI_AI} to call the session's model; pass \`complete\` to createPiExtension`, { cause: e })
    },
  )
  return piAi
}

/** The answer of a pi-ai completion as a `SummaryResponse`; pi-ai reports failures in the message. */
export function summaryResponse(model: PiModel, msg: PiAssistantMessage, signal?: AbortSignal): SummaryResponse {
  if (msg.stopReason === 'aborted') throw abortError(signal)
  if (msg.stopReason === 'error') {
    // pi-ai puts the provider's message here ("401 ...", "prompt is too long ..."): compact() recognises a
    // too-long prompt by its text; any other failure falls back to the extractive summary.
    throw new Error(msg.errorMessage || 'the model call failed')
  }
  const text = msg.content
    .filter((c) => c.type === 'text' && typeof c.text === 'string')
    .map((c) => c.text)
    .join('\n')
  const out: SummaryResponse = { text, model: { providerID: model.provider, modelID: model.id } }
  const finish = { stop: 'stop', length: 'length', toolUse: 'tool-calls' }[msg.stopReason ?? '']
  if (finish) out.finishReason = finish
  const usage = usageFromProvider(msg.usage)
  if (usage) out.usage = usage
  return out
}

const userText = (text: string) => ({ role: 'user', content: [{ type: 'text', text }], timestamp: Date.now() })

/** The text of the conversation form's last message: the instructions `compact()` wrote. */
function instructions(req: SummaryRequest): string | undefined {
  const content = req.messages?.at(-1)?.content
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return undefined
  return content.flatMap((c: { type?: string; text?: unknown }) => (c.type === 'text' && typeof c.text === 'string' ? [c.text] : [])).join('\n')
}

/** What is sent: the agent's request and the instructions (the conversation form), else contextfold's prompt. */
function contextOf(req: SummaryRequest, request: PiRequest | undefined): { context: PiContext; options: Record<string, unknown> } {
  const text = req.input === 'conversation' && request ? instructions(req) : undefined
  if (text !== undefined && request) {
    return { context: { ...request.context, messages: [...request.context.messages, userText(text)] }, options: request.options }
  }
  return { context: { systemPrompt: req.system, messages: [userText(req.prompt)] }, options: {} }
}

/**
 * A summarizer writing with the model of the pi session `ctx` belongs to (`ctx.model`, read at each
 * call), through pi's model registry (pi 0.74+) or pi-ai's `complete` (`complete`, default the
 * `@mariozechner/pi-ai` pi's loader provides) with the registry's API key. Given the agent's last
 * `request`, a summary asked in the conversation form (`req.input`) sends it unchanged, then one
 * user message with the instructions. pi's print mode makes a handler's `ctx` throw once the prompt
 * returns, while a compaction may still run: give it a copy of the fields read in the handler
 * (`{ model: ctx.model, modelRegistry: ctx.modelRegistry }`), as `session_before_compact` does.
 */
export function piModelSummarizer(ctx: PiExtensionContext, complete?: PiComplete, request?: PiRequest): Summarizer {
  return async (req, signal) => {
    throwIfAborted(signal)
    const model = ctx.model
    if (!model) throw new UnknownModelError('the pi session has no model selected')
    const sent = contextOf(req, request)
    const context = sent.context
    const maxTokens = model.maxTokens ? Math.min(req.maxOutputTokens, model.maxTokens) : req.maxOutputTokens
    const options: Record<string, unknown> = { ...sent.options, maxTokens, signal }
    const registry = ctx.modelRegistry
    let msg: PiAssistantMessage
    if (!complete && typeof registry?.streamSimple === 'function') {
      msg = await registry.streamSimple(model as never, context, options).result()
    } else {
      if (registry?.getApiKeyAndHeaders) {
        const auth = await registry.getApiKeyAndHeaders(model as never)
        if (!auth.ok) throw new AuthError(auth.error ?? `no credentials for ${model.provider}`)
        if (auth.apiKey) options.apiKey = auth.apiKey
        if (auth.headers) options.headers = auth.headers
      } else if (registry?.getApiKey) {
        const apiKey = await registry.getApiKey(model as never)
        if (apiKey) options.apiKey = apiKey
      }
      msg = await (complete ?? (await loadComplete()))(model as never, context, options)
    }
    throwIfAborted(signal)
    return summaryResponse(model, msg, signal)
  }
}
