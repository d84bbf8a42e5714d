// Summaries billed as cache reads: after a multi-step agent loop against a real HTTP server on
// 127.0.0.1 that reports cached input as OpenAI does (`prompt_tokens_details.cached_tokens`) and as
// Anthropic does (`cache_read_input_tokens` / `cache_creation_input_tokens`), computed from the
// prefix the previous requests shared, a compaction in the conversation form reads the whole
// previous prompt from the cache; the transcript form reads nothing.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'

import { Session, compact, openAICompatibleSummarizer } from '../dist/index.js'
import { SUMMARY_TOOL_OUTPUT_MAX_CHARS, usageFromProvider } from '../dist/native.js'
import type { Summarizer, SummaryRequest } from '../dist/index.js'
import type { LastRequest } from '../dist/types.js'
import type { ModelMessageLike } from '../dist/native.js'
import { FakeOpenAI, PrefixCache } from './fake-openai.js'

const SYSTEM = 'You are a careful coding agent. Work in small steps.'
const REQUEST = 'Find why the billing export drops rows, fix it, and never touch the migrations folder.'
const OPENAI_TOOLS = [
  { type: 'function', function: { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } },
  { type: 'function', function: { name: 'bash', description: 'Run a command', parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } } },
]
const ANTHROPIC_TOOLS = OPENAI_TOOLS.map((t) => ({ name: t.function.name, description: t.function.description, input_schema: t.function.parameters }))
const STEPS = 8

const server = new FakeOpenAI()
beforeAll(() => server.start())
afterAll(() => server.close())
beforeEach(() => {
  server.reset()
  server.cache = new PrefixCache()
})

/** A tool output of step `i`: a few hundred lines that differ from step to step. */
function output(i: number): string {
  return Array.from({ length: 120 }, (_, n) => `src/billing/export${i}.ts:${n + 1}: row ${i * 1000 + n} written`).join('\n')
}

function newSession(preserveRecentTokens = 3_000): Session {
  return Session.fromModelMessages([{ role: 'user', content: REQUEST }], {
    model: { limit: { context: 60_000, output: 4_000 } },
    compaction: { preserveRecentTokens },
    tokenizer: 'o200k',
  })
}

async function post(path: string, body: unknown): Promise<Record<string, any>> {
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return (await res.json()) as Record<string, any>
}

/** Appends a step's tool call and its result, as an agent does with the answer. */
function appendStep(s: Session, i: number): void {
  const id = `call_${i}`
  s.appendModelMessages([
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: id, toolName: 'bash', input: { cmd: `grep -n row src/billing/export${i}.ts` } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: id, toolName: 'bash', output: { type: 'text', value: output(i) } }] },
  ])
}

/** The agent loop over OpenAI chat completions: each step sends system, tools and the session's messages. Returns the last request's prompt tokens. */
async function openAILoop(s: Session): Promise<number> {
  let last = 0
  for (let i = 0; i < STEPS; i++) {
    server.script({ text: '', toolCalls: [{ id: `call_${i}`, name: 'bash', arguments: { cmd: 'grep' } }] })
    const answer = await post('/v1/chat/completions', {
      model: 'agent-model',
      tools: OPENAI_TOOLS,
      messages: [{ role: 'system', content: SYSTEM }, ...s.toModelMessages({ format: 'openai' })],
    })
    last = answer.usage.prompt_tokens
    appendStep(s, i)
  }
  return last
}

/** The agent loop over Anthropic Messages. Returns the last request's input tokens (cached or not). */
async function anthropicLoop(s: Session): Promise<number> {
  let last = 0
  for (let i = 0; i < STEPS; i++) {
    server.script({ text: '', toolCalls: [{ id: `call_${i}`, name: 'bash', arguments: { cmd: 'grep' } }] })
    const answer = await post('/v1/messages', { model: 'agent-model', max_tokens: 4000, system: SYSTEM, tools: ANTHROPIC_TOOLS, ...s.toModelMessages({ format: 'anthropic' }) })
    const u = answer.usage
    last = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens
    appendStep(s, i)
  }
  return last
}

const openAISummarizer = () => openAICompatibleSummarizer({ baseURL: server.baseURL, model: 'agent-model' })
const lastRequest = (s: Session, tools: unknown): LastRequest => ({ messages: s.toModelMessages() as unknown as ModelMessageLike[], system: SYSTEM, tools })

describe('the summary request as the agent`s own conversation (OpenAI-compatible, cached_tokens)', () => {
  it('reads the whole previous prompt from the cache, and the summary message records the cache read', async () => {
    // A tail that keeps the last steps: the request holds all of them but the newest.
    const s = newSession(8_000)
    const previous = await openAILoop(s)
    server.script({ text: '## Goal\n- fix the billing export' })
    const r = await compact(s, { summarizer: openAISummarizer(), summaryInput: 'conversation', lastRequest: lastRequest(s, OPENAI_TOOLS) })
    expect(r).toMatchObject({ status: 'compacted', fallback: false })
    const sent = server.requests.at(-1)!
    const usage = { cached: 0, total: 0 }
    const summary = s.context().find((m) => m.summary)!
    // The summary request is the agent's request (system, tools, messages unchanged) plus one instruction message.
    const agent = server.requests.at(-2)!.body
    expect(sent.body.tools).toEqual(OPENAI_TOOLS)
    expect(sent.body.messages.slice(0, agent.messages.length)).toEqual(agent.messages)
    const instructions = sent.body.messages.at(-1)!
    expect(instructions.role).toBe('user')
    // Then the instructions only: the last step (its call and result) arrived after the agent's
    // request and stays verbatim after the summary, which need not cover it.
    expect(sent.body.messages).toHaveLength(agent.messages.length + 1)
    expect(JSON.stringify(instructions.content)).toMatch(/do NOT call tools/)
    // The instructions name the kept tail the request holds: the context's after the summary
    // request, the summary, the latest request it restates (the tail starts inside the request's
    // loop) and the continue message, but the last step's two.
    const kept = Number(/except its last (\d+) messages/.exec(JSON.stringify(instructions.content))?.[1])
    expect(kept).toBe(s.toModelMessages().length - 4 - 2)
    expect(kept).toBeGreaterThan(1)
    usage.cached = summary.tokens!.cacheRead ?? 0
    usage.total = summary.tokens!.input + usage.cached
    expect(usage.cached).toBe(previous)
    expect(usage.cached / usage.total).toBeGreaterThan(0.8)
    // The loss audit still holds: the request the summary did not quote is restored.
    expect(r.summary).toContain('never touch the migrations folder')
  })

  it('cuts the tool output that arrived after the last request and is summarized, as the transcript form does, and leaves the cached prefix as it was', async () => {
    // A tail too small for the last step: it is summarized with the rest.
    const s = newSession(500)
    await openAILoop(s)
    expect(s.contextTokens().unsent).toBe(1) // the last step's answer (its call and result): no request read it
    server.script({ text: '## Goal\n- fix the billing export' })
    const inner = openAISummarizer()
    let cachedMessages: number | undefined
    const summarizer: Summarizer = (req, signal) => ((cachedMessages = req.cachedMessages), inner(req, signal))
    await compact(s, { summarizer, summaryInput: 'conversation', lastRequest: lastRequest(s, OPENAI_TOOLS) })
    const agent = server.requests.at(-2)!.body.messages
    const sent = server.requests.at(-1)!.body.messages
    expect(sent.slice(0, agent.length)).toEqual(agent)
    // What the provider read is the agent's request (its system message is not among the model messages).
    expect(cachedMessages).toBe(agent.length - 1)
    const older = agent.filter((m: { role: string }) => m.role === 'tool')
    expect(older.at(-1)!.content).toBe(output(STEPS - 2)) // sent before: verbatim
    const fresh = sent[agent.length + 1]
    expect(fresh.role).toBe('tool')
    const full = output(STEPS - 1)
    expect(fresh.content.length).toBeLessThan(full.length / 2)
    expect(fresh.content).toContain(full.slice(0, SUMMARY_TOOL_OUTPUT_MAX_CHARS / 4))
    expect(fresh.content).toContain(full.slice(-SUMMARY_TOOL_OUTPUT_MAX_CHARS / 4))
    expect(fresh.content).toMatch(/omitted/)
  })

  it('a request recorded after the last step leaves nothing to cut', async () => {
    const s = newSession()
    await openAILoop(s)
    s.recordRequest()
    expect(s.contextTokens().unsent).toBe(0)
    server.script({ text: '## Goal\n- fix the billing export' })
    await compact(s, { summarizer: openAISummarizer(), summaryInput: 'conversation', lastRequest: lastRequest(s, OPENAI_TOOLS) })
    const sent = server.requests.at(-1)!.body.messages
    expect(sent.at(-2)).toMatchObject({ role: 'tool', content: output(STEPS - 1) })
  })

  it('the transcript form reads nothing from the cache', async () => {
    const s = newSession()
    await openAILoop(s)
    server.script({ text: '## Goal\n- fix the billing export' })
    const r = await compact(s, { summarizer: openAISummarizer(), summaryInput: 'transcript', lastRequest: lastRequest(s, OPENAI_TOOLS) })
    expect(r.status).toBe('compacted')
    const sent = server.requests.at(-1)!
    expect(sent.body.tools).toBeUndefined()
    expect(sent.body.messages).toHaveLength(2)
    const summary = s.context().find((m) => m.summary)!
    expect(summary.tokens!.cacheRead ?? 0).toBe(0)
  })

  it('without the agent`s tools and system prompt the prefix differs from the first segment: no cache read', async () => {
    const s = newSession()
    await openAILoop(s)
    server.script({ text: '## Goal\n- fix the billing export' })
    await compact(s, { summarizer: openAISummarizer(), summaryInput: 'conversation' })
    expect(s.context().find((m) => m.summary)!.tokens!.cacheRead ?? 0).toBe(0)
  })

  it('a "prompt too long" answer to the conversation form is asked again as a transcript', async () => {
    const s = newSession()
    await openAILoop(s)
    server.script({ status: 400, body: { error: { message: "This model's maximum context length is 8192 tokens", code: 'context_length_exceeded' } } }, { text: '## Goal\n- from the transcript' })
    const r = await compact(s, { summarizer: openAISummarizer(), summaryInput: 'conversation', lastRequest: lastRequest(s, OPENAI_TOOLS) })
    expect(r).toMatchObject({ status: 'compacted', fallback: false })
    expect(r.summary).toContain('from the transcript')
    const [conversation, transcript] = server.requests.slice(-2)
    expect(conversation!.body.tools).toEqual(OPENAI_TOOLS)
    expect(transcript!.body.messages).toHaveLength(2)
    expect(transcript!.prompt).toContain('<conversation>')
  })

  it('an answer that calls a tool is asked again as a transcript', async () => {
    const s = newSession()
    await openAILoop(s)
    server.script({ text: '', toolCalls: [{ id: 'call_x', name: 'bash', arguments: { cmd: 'ls' } }] }, { text: '## Goal\n- from the transcript' })
    const r = await compact(s, { summarizer: openAISummarizer(), summaryInput: 'conversation', lastRequest: lastRequest(s, OPENAI_TOOLS) })
    expect(r).toMatchObject({ status: 'compacted', fallback: false })
    expect(r.summary).toContain('from the transcript')
  })
})

describe('a custom summarizer sending req.messages to Anthropic Messages (cache_read_input_tokens)', () => {
  /** Sends the conversation form as an Anthropic Messages request: the agent's system and tools, its messages, then the instructions. */
  const anthropicSummarizer: Summarizer = async (req: SummaryRequest) => {
    const converted = Session.fromModelMessages(req.messages!, { model: { limit: { context: 0 } } }).toModelMessages({ format: 'anthropic' })
    const answer = await post('/v1/messages', { model: 'agent-model', max_tokens: req.maxOutputTokens, system: req.request!.system, tools: req.request!.tools, ...converted })
    return { text: answer.content[0].text, finishReason: answer.stop_reason, usage: usageFromProvider(answer.usage)! }
  }

  it('reads the previous request from the cache and writes only what followed it', async () => {
    const s = newSession()
    const previous = await anthropicLoop(s)
    server.script({ text: '## Goal\n- fix the billing export' })
    const r = await compact(s, { summarizer: anthropicSummarizer, summaryInput: 'conversation', lastRequest: lastRequest(s, ANTHROPIC_TOOLS) })
    expect(r).toMatchObject({ status: 'compacted', fallback: false })
    const tokens = s.context().find((m) => m.summary)!.tokens!
    expect(tokens.cacheRead).toBe(previous)
    // Written: the last step's call and result, and the instruction message (which Anthropic's
    // alternation joins to that result), a small part of the whole.
    expect(tokens.cacheWrite).toBeGreaterThan(0)
    expect(tokens.cacheWrite! / (tokens.cacheRead! + tokens.cacheWrite!)).toBeLessThan(0.2)
  })
})
