// A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions protocol, with scripted answers.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: {
    model: string
    messages: Array<{ role: string; content: string }>
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
  /** A completion with this text. */
  | { text: string; finish?: string; usage?: Record<string, unknown>; model?: string }
  /** An HTTP error (a JSON body is sent as JSON). */
  | { status: number; body: unknown }
  /** Never answers (until the client goes away). */
  | { hang: true }

export class FakeOpenAI {
  readonly requests: Received[] = []
  #server: Server | undefined
  #queue: Array<Reply | ((r: Received) => Reply)> = []
  #waiters: Array<(r: Received) => void> = []
  /** Answer when the script is empty. */
  fallback: Reply = { text: '## Goal\n- default summary' }
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
        send(res, reply)
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
  const payload = {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 0,
    model: reply.model ?? 'fake-model',
    choices: [{ index: 0, message: { role: 'assistant', content: reply.text }, finish_reason: reply.finish ?? 'stop' }],
    usage: reply.usage ?? { prompt_tokens: 1234, completion_tokens: 56, total_tokens: 1290 },
  }
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(JSON.stringify(payload))
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
