// A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions protocol, with scripted answers
// (as one JSON body, or as server-sent events when the request asks for `stream: true`), and
// Anthropic's Messages protocol at `/v1/messages`. With a `PrefixCache`, the usage of each answer
// reports the prompt prefix a previous request shared, as each provider reports cached input.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

import { countTokens } from '../dist/index.js'

/**
 * A provider's prompt cache: a request's prompt is a list of segments in the provider's prefix
 * order (tools, system, then each message, or for Anthropic each content block, which it caches
 * block by block); the cached part is the longest run of leading segments some earlier request
 * had. Tokens are o200k counts of the segments' JSON.
 */
export class PrefixCache {
  readonly #seen: string[][] = []

  /** The prompt's tokens in all and in its longest prefix already seen; then remembers the prompt. */
  read(segments: readonly unknown[]): { total: number; cached: number } {
    // A breakpoint marks where to cache; it is not part of what is cached.
    const json = segments.map((s) => JSON.stringify(s ?? null, (k, v: unknown) => (k === 'cache_control' ? undefined : v)))
    const tokens = json.map((j) => countTokens(j, 'o200k'))
    let shared = 0
    for (const prev of this.#seen) {
      let n = 0
      while (n < json.length && n < prev.length && prev[n] === json[n]) n++
      shared = Math.max(shared, n)
    }
    this.#seen.push(json)
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
    return { total: sum(tokens), cached: sum(tokens.slice(0, shared)) }
  }
}

export interface Received {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: {
    model: string
    messages: Array<{ role: string; content: string; tool_calls?: Array<{ id: string }>; tool_call_id?: string }>
    max_tokens?: number
    max_completion_tokens?: number
    [key: string]: unknown
  }
  /** The system message's content. */
  system: string
  /** The user message's content: the summarizer prompt. */
  prompt: string
  /** Resolves when the client closed the connection before an answer was sent (an abort). */
  closedEarly: Promise<void>
}

export type Reply =
  /** A completion with this text (and tool calls: the finish reason is then `tool_calls` unless given). */
  | { text: string; finish?: string; usage?: Record<string, unknown>; model?: string; toolCalls?: ToolCall[] }
  /** An HTTP error (a JSON body is sent as JSON). */
  | { status: number; body: unknown }
  /** Never answers (until the client goes away). */
  | { hang: true }

/** A tool call the fake model makes; `arguments` is sent as JSON. */
export interface ToolCall {
  id: string
  name: string
  arguments: unknown
}

export class FakeOpenAI {
  readonly requests: Received[] = []
  #server: Server | undefined
  #queue: Array<Reply | ((r: Received) => Reply)> = []
  #waiters: Array<(r: Received) => void> = []
  /** Answer when the script is empty (a function answers each request). */
  fallback: Reply | ((r: Received) => Reply) = { text: '## Goal\n- default summary' }
  /** Reports cached input in the usage of answers that give none. */
  cache: PrefixCache | undefined
  port = 0

  get baseURL(): string {
    return `http://127.0.0.1:${this.port}/v1`
  }

  /** Queues the next answers, in order. */
  script(...replies: Array<Reply | ((r: Received) => Reply)>): this {
    this.#queue.push(...replies)
    return this
  }

  reset(): void {
    this.requests.length = 0
    this.#queue.length = 0
    this.#waiters.length = 0
  }

  /** The next request the server receives (or the one already received at `index`). */
  request(index: number): Promise<Received> {
    const got = this.requests[index]
    if (got) return Promise.resolve(got)
    return new Promise((resolve) => {
      const check = (r: Received) => {
        if (this.requests.indexOf(r) === index) resolve(r)
        else this.#waiters.push(check)
      }
      this.#waiters.push(check)
    })
  }

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        let body: Received['body']
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Received['body']
        } catch {
          res.writeHead(400).end('bad json')
          return
        }
        let answered = false
        const closedEarly = new Promise<void>((resolve) => {
          res.on('close', () => {
            if (!answered) resolve()
          })
        })
        const received: Received = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body,
          system: body.messages?.find((m) => m.role === 'system')?.content ?? '',
          prompt: body.messages?.find((m) => m.role === 'user')?.content ?? '',
          closedEarly,
        }
        this.requests.push(received)
        const next = this.#queue.shift() ?? this.fallback
        const reply = typeof next === 'function' ? next(received) : next
        const waiters = this.#waiters.splice(0)
        for (const w of waiters) w(received)
        if ('hang' in reply) return
        answered = true
        const anthropic = received.path.endsWith('/messages')
        if ('text' in reply && !reply.usage && this.cache) reply.usage = cachedUsage(this.cache, body, anthropic)
        if (anthropic) sendAnthropic(res, reply)
        else if (body.stream === true && 'text' in reply) stream(res, reply)
        else send(res, reply)
      })
    })
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve))
    this.port = (this.#server.address() as AddressInfo).port
  }

  async close(): Promise<void> {
    const server = this.#server
    if (!server) return
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

function send(res: ServerResponse, reply: Exclude<Reply, { hang: true }>): void {
  if ('status' in reply) {
    const json = typeof reply.body !== 'string'
    res.writeHead(reply.status, { 'content-type': json ? 'application/json' : 'text/plain' })
    res.end(json ? JSON.stringify(reply.body) : reply.body)
    return
  }
  const toolCalls = reply.toolCalls?.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }))
  const payload = {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 0,
    model: reply.model ?? 'fake-model',
    choices: [{ index: 0, message: { role: 'assistant', content: reply.text, tool_calls: toolCalls }, finish_reason: finishOf(reply) }],
    usage: reply.usage ?? DEFAULT_USAGE,
  }
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(JSON.stringify(payload))
}

const DEFAULT_USAGE = { prompt_tokens: 1234, completion_tokens: 56, total_tokens: 1290 }
const OUTPUT_TOKENS = 56

/** A request's prompt as the provider caches it (see `PrefixCache`). */
export function promptSegments(body: { tools?: unknown; system?: unknown; messages?: Array<{ role: string; content: unknown }> }, anthropic: boolean): unknown[] {
  const messages = body.messages ?? []
  const blocks = (m: { role: string; content: unknown }): unknown[] => (Array.isArray(m.content) ? m.content.map((block: unknown) => ({ role: m.role, block })) : [m])
  return anthropic ? [body.tools, body.system, ...messages.flatMap(blocks)] : [body.tools, ...messages]
}

/** Usage with the cached prefix: OpenAI's `prompt_tokens_details.cached_tokens`, or Anthropic's cache read and write counts. */
function cachedUsage(cache: PrefixCache, body: Received['body'], anthropic: boolean): Record<string, unknown> {
  const { total, cached } = cache.read(promptSegments(body, anthropic))
  if (anthropic) return { input_tokens: 0, cache_read_input_tokens: cached, cache_creation_input_tokens: total - cached, output_tokens: OUTPUT_TOKENS }
  return { prompt_tokens: total, completion_tokens: OUTPUT_TOKENS, total_tokens: total + OUTPUT_TOKENS, prompt_tokens_details: { cached_tokens: cached } }
}

/** An Anthropic Messages answer: text and tool_use blocks, `stop_reason`, usage. */
function sendAnthropic(res: ServerResponse, reply: Exclude<Reply, { hang: true }>): void {
  if ('status' in reply) return send(res, reply)
  const content = [
    ...(reply.text ? [{ type: 'text', text: reply.text }] : []),
    ...(reply.toolCalls ?? []).map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.arguments })),
  ]
  const stop = reply.finish ?? (reply.toolCalls?.length ? 'tool_use' : 'end_turn')
  const payload = { id: 'msg_test', type: 'message', role: 'assistant', model: reply.model ?? 'fake-model', content, stop_reason: stop, usage: reply.usage ?? { input_tokens: 1234, output_tokens: OUTPUT_TOKENS } }
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(JSON.stringify(payload))
}

function finishOf(reply: { finish?: string; toolCalls?: ToolCall[] }): string {
  return reply.finish ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop')
}

/** The same answer as chunks: the text, each tool call, the finish reason, then the usage (as `stream_options.include_usage` asks). */
function stream(res: ServerResponse, reply: Extract<Reply, { text: string }>): void {
  const model = reply.model ?? 'fake-model'
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 0, model, choices, ...extra })}\n\n`
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  res.write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]))
  if (reply.text) res.write(chunk([{ index: 0, delta: { content: reply.text }, finish_reason: null }]))
  reply.toolCalls?.forEach((c, index) => {
    const call = { index, id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }
    res.write(chunk([{ index: 0, delta: { tool_calls: [call] }, finish_reason: null }]))
  })
  res.write(chunk([{ index: 0, delta: {}, finish_reason: finishOf(reply) }]))
  res.write(chunk([], { usage: reply.usage ?? DEFAULT_USAGE }))
  res.end('data: [DONE]\n\n')
}

/** The lines of `text` that are exactly `line`. */
export function countLines(text: string, line: string): number {
  return text.split('\n').filter((l) => l === line).length
}

/** The text between the first `<tag>` line and the next `</tag>` line (structure as the summarizer reads it). */
export function section(prompt: string, tag: string): string | undefined {
  const lines = prompt.split('\n')
  const start = lines.indexOf(`<${tag}>`)
  if (start < 0) return undefined
  const end = lines.indexOf(`</${tag}>`, start + 1)
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n')
}
