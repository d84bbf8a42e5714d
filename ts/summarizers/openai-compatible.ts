// A summarizer over any OpenAI-compatible `/chat/completions` endpoint, with plain `fetch`.
import { Session, usageFromProvider } from '../native.js'
import {
  AuthError,
  isPromptTooLong,
  NetworkError,
  PromptTooLongError,
  RateLimitError,
  ServerError,
  SummaryFailedError,
  abortError,
  throwIfAborted,
  type ContextfoldError,
  type ContextfoldErrorOptions,
} from '../errors.js'
import type { Summarizer, SummaryRequest, SummaryResponse } from '../types.js'

export interface OpenAICompatibleOptions {
  /** E.g. `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`; `/chat/completions` is appended. */
  baseURL: string
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string
  model: string
  headers?: Record<string, string>
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch
  temperature?: number
  /** The field carrying the output budget: `max_tokens` (default, widest support) or `max_completion_tokens` (OpenAI reasoning models). */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens'
  /** Extra request body fields, e.g. `{ reasoning_effort: 'low' }`. */
  body?: Record<string, unknown>
  /** Recorded on the summary message as `model.providerID` (default `openai-compatible`). */
  providerID?: string
}

const MAX_ERROR_BODY = 16_384

type Json = Record<string, unknown>
const obj = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined)
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)

function contentOf(c: unknown): string {
  if (typeof c === 'string') return c
  if (Array.isArray(c)) {
    return c
      .map((p) => {
        const part = obj(p)
        return part && (part.type === 'text' || part.type === 'output_text') && typeof part.text === 'string' ? part.text : ''
      })
      .join('')
  }
  return ''
}

/** The error an HTTP answer stands for, by status and body. */
export function httpError(status: number, statusText: string, body: string, url: string): ContextfoldError {
  let detail = body.trim()
  const parsed = (() => {
    try {
      return obj(JSON.parse(body))
    } catch {
      return undefined
    }
  })()
  const err = obj(parsed?.error)
  const message = typeof err?.message === 'string' ? err.message : typeof parsed?.message === 'string' ? parsed.message : undefined
  if (message) detail = message
  const text = `${url}: HTTP ${status}${statusText ? ` ${statusText}` : ''}${detail ? `: ${detail.slice(0, 500)}` : ''}`
  const opts: ContextfoldErrorOptions = { status, body: body.slice(0, 4096) }
  if (isPromptTooLong(status, `${detail}\n${body}`)) return new PromptTooLongError(text, opts)
  if (status === 401 || status === 403) return new AuthError(text, opts)
  if (status === 429) return new RateLimitError(text, opts)
  if (status >= 500) return new ServerError(text, opts)
  return new SummaryFailedError(text, opts)
}

function networkError(e: unknown, url: string): NetworkError {
  const cause = obj(obj(e)?.cause)
  const code = typeof cause?.code === 'string' ? ` (${cause.code})` : ''
  const message = e instanceof Error ? e.message : String(e)
  return new NetworkError(`${url}: ${message}${code}`, { cause: e })
}

/**
 * The chat messages and settings of a summary request: the transcript form (a system prompt and the
 * transcript), or the conversation form (the agent's messages in OpenAI's layout, with its system
 * prompt, tools and tool choice, then the instructions).
 */
function chatRequest(req: SummaryRequest): Json {
  if (req.input !== 'conversation' || !req.messages) {
    return {
      messages: [
        { role: 'system', content: req.system },
        { role: 'user', content: req.prompt },
      ],
    }
  }
  const converted = Session.fromModelMessages(req.messages, { model: { limit: { context: 0 } }, tokenizer: 'estimate' }).toModelMessages({
    format: 'openai',
  })
  const settings = req.request ?? {}
  const out: Json = { messages: settings.system ? [{ role: 'system', content: settings.system }, ...converted] : converted }
  if (settings.tools !== undefined) out.tools = settings.tools
  if (settings.toolChoice !== undefined) out.tool_choice = settings.toolChoice
  return out
}

/**
 * A summarizer calling `${baseURL}/chat/completions` (OpenAI, OpenRouter, Groq, vLLM, Ollama,
 * LM Studio, llama.cpp...). With `req.input === 'conversation'` it sends the agent's own
 * conversation (`req.messages`, with `req.request`'s system prompt, tools and tool choice), else
 * its system prompt and the transcript. Errors carry the HTTP `status` and a code: `CF_AUTH` (401/403),
 * `CF_RATE_LIMITED` (429), `CF_SERVER` (5xx), `CF_PROMPT_TOO_LONG` (400/413 saying so),
 * `CF_NETWORK` (unreachable), `CF_ABORTED`.
 */
export function openAICompatibleSummarizer(options: OpenAICompatibleOptions): Summarizer {
  const url = `${options.baseURL.replace(/\/+$/, '')}/chat/completions`
  const doFetch = options.fetch ?? globalThis.fetch
  const field = options.maxTokensField ?? 'max_tokens'
  return async (req, signal): Promise<SummaryResponse> => {
    throwIfAborted(signal)
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...options.headers }
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`
    const body: Json = {
      ...options.body,
      model: options.model,
      ...chatRequest(req),
      [field]: req.maxOutputTokens,
      stream: false,
    }
    if (options.temperature !== undefined) body.temperature = options.temperature
    let res: Response
    let text: string
    try {
      const init: RequestInit = { method: 'POST', headers, body: JSON.stringify(body) }
      if (signal) init.signal = signal
      res = await doFetch(url, init)
      text = await res.text()
    } catch (e) {
      if (signal?.aborted) throw abortError(signal)
      throw networkError(e, url)
    }
    throwIfAborted(signal)
    if (!res.ok) throw httpError(res.status, res.statusText, text.slice(0, MAX_ERROR_BODY), url)
    let parsed: Json | undefined
    try {
      parsed = obj(JSON.parse(text))
    } catch {
      parsed = undefined
    }
    if (!parsed) throw new SummaryFailedError(`${url}: the answer is not JSON: ${text.slice(0, 200)}`, { status: res.status })
    const bodyError = obj(parsed.error)
    if (bodyError) {
      // Some gateways answer 200 with an error object; its `code` is often the upstream status.
      const code = num(bodyError.code)
      const status = res.status >= 400 ? res.status : code !== undefined && code >= 400 && code < 600 ? code : 500
      throw httpError(status, '', text.slice(0, MAX_ERROR_BODY), url)
    }
    const choice = obj(Array.isArray(parsed.choices) ? parsed.choices[0] : undefined)
    if (!choice) throw new SummaryFailedError(`${url}: the answer has no choices`, { status: res.status })
    const out: SummaryResponse = { text: contentOf(obj(choice.message)?.content) }
    if (typeof choice.finish_reason === 'string') out.finishReason = choice.finish_reason
    const usage = usageFromProvider(parsed.usage)
    if (usage) out.usage = usage
    const modelID = typeof parsed.model === 'string' && parsed.model ? parsed.model : options.model
    out.model = { providerID: options.providerID ?? 'openai-compatible', modelID }
    return out
  }
}
