// compact() against a real OpenAI-compatible HTTP server on 127.0.0.1, through openAICompatibleSummarizer.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'

import { compact, openAICompatibleSummarizer } from '../dist/index.js'
import { CONTINUE_TEXT, SUMMARY_HEADER } from '../dist/prompt.js'
import type { Session, Summarizer } from '../dist/index.js'
import { smallSession, snapshot } from './compact-fixtures.js'
import { FakeOpenAI, countLines, section } from './fake-openai.js'

const server = new FakeOpenAI()
let summarizer: Summarizer

beforeAll(async () => {
  await server.start()
  summarizer = openAICompatibleSummarizer({ baseURL: server.baseURL, apiKey: 'sk-test', model: 'summary-model' })
})
afterAll(() => server.close())
beforeEach(() => server.reset())

const EXTRACTIVE_NOTE = 'Summary extracted without a model'

/** The session holds exactly one compaction: request, summary, and the continue message at the end. */
function expectCompacted(s: Session, before: number, appended: number) {
  expect(s.length).toBe(before + appended)
  const msgs = s.messages()
  const request = msgs[before]!
  const summary = msgs[before + 1]!
  expect(request.parts.some((p) => p.type === 'compaction')).toBe(true)
  expect(summary).toMatchObject({ role: 'assistant', summary: true, finish: 'stop', parentID: request.id })
  const ctx = s.context().map((m) => m.id)
  expect(ctx.slice(0, 2)).toEqual([request.id, summary.id])
  return { request, summary, text: (summary.parts[0] as { text: string }).text }
}

describe('compact() over HTTP', () => {
  it('summarizes with a normal answer: request, summary, continue message; the prompt carries the transcript', async () => {
    const s = smallSession()
    const before = s.length
    server.script({ text: '## Goal\n- SUMMARY-OK port the report\n\n## Next Steps\n1. finish', usage: { prompt_tokens: 900, completion_tokens: 40, total_tokens: 940 } })
    const r = await compact(s, { summarizer })
    expect(r.status).toBe('compacted')
    expect(r.fallback).toBe(false)
    expect(r.reason).toBeUndefined()
    expect(server.requests).toHaveLength(1)
    const req = server.requests[0]!
    expect(req.method).toBe('POST')
    expect(req.path).toBe('/v1/chat/completions')
    expect(req.headers.authorization).toBe('Bearer sk-test')
    expect(req.body.model).toBe('summary-model')
    expect(req.body.max_tokens).toBe(r.plan!.summaryBudget)
    expect(req.system).toMatch(/summarization assistant/)
    expect(req.system).toMatch(/do NOT continue the conversation/)
    // The transcript is inside <conversation>, with every summarized user message and the files.
    const conv = section(req.prompt, 'conversation')!
    expect(conv).toContain('[User]: Request 1:')
    expect(conv).toContain('[Assistant tool call]: edit({"path":"src/f1.ts"})')
    expect(section(req.prompt, 'modified-files')).toContain('src/f1.ts')
    expect(req.prompt).toContain('Create a new anchored summary')
    expect(req.prompt).toContain('## Constraints & Preferences')
    expect(req.prompt).not.toContain('<previous-summary>')

    const { summary, text } = expectCompacted(s, before, 3)
    expect(text.startsWith(SUMMARY_HEADER)).toBe(true)
    expect(section(text, 'context-summary')).toBe('## Goal\n- SUMMARY-OK port the report\n\n## Next Steps\n1. finish')
    expect(section(text, 'modified-files')!.split('\n')).toEqual(r.plan!.modifiedFiles)
    expect(summary.tokens).toMatchObject({ input: 900, output: 40, total: 940 })
    expect(summary.model).toEqual({ providerID: 'openai-compatible', modelID: 'fake-model' })
    const cont = s.messages().at(-1)!
    expect(cont).toMatchObject({ role: 'user', parts: [{ type: 'text', text: CONTINUE_TEXT, synthetic: true, metadata: { compaction_continue: true } }] })
    expect(r.messages!.map((m) => m.id)).toEqual(s.messages().slice(before).map((m) => m.id))
    expect(r.summary).toBe(text)
    expect(r.tokensAfter!).toBeLessThan(r.tokensBefore)
    // What the model sees now: the request, the summary, the kept tail, the continue message.
    const ctx = s.context()
    expect(ctx.at(-1)!.id).toBe(cont.id)
    expect(ctx.map((m) => m.id)).not.toContain('u1')
    expect(ctx.map((m) => m.id)).toContain(r.plan!.tailStartID)
  })

  it('rejects an answer cut off at the budget (finish_reason "length") and falls back to the extractive summary', async () => {
    const s = smallSession()
    server.script({ text: '## Goal\n- half a summa', finish: 'length' })
    const r = await compact(s, { summarizer })
    expect(r).toMatchObject({ status: 'compacted', fallback: true })
    expect(r.error?.code).toBe('CF_INVALID_SUMMARY')
    expect(r.reason).toMatch(/length/)
    const text = r.summary!
    expect(text).toContain(EXTRACTIVE_NOTE)
    expect(text).not.toContain('half a summa')
    expect(s.context()[1]!.summary).toBe(true)
  })

  it('with fallback: false, an unusable answer fails and leaves the session unchanged', async () => {
    const s = smallSession()
    const before = snapshot(s)
    server.script({ text: '   ', finish: 'stop' })
    const r = await compact(s, { summarizer, fallback: false })
    expect(r).toMatchObject({ status: 'failed', fallback: false })
    expect(r.error?.code).toBe('CF_INVALID_SUMMARY')
    expect(snapshot(s)).toEqual(before)
  })

  it('retries a "prompt is too long" 400 with a shorter prompt (oldest messages dropped)', async () => {
    const s = smallSession(12)
    server.script(
      { status: 400, body: { error: { message: 'prompt is too long: 250000 tokens > 200000 maximum', type: 'invalid_request_error' } } },
      { text: '## Goal\n- RETRIED-SUMMARY' },
    )
    const r = await compact(s, { summarizer })
    expect(r).toMatchObject({ status: 'compacted', fallback: false })
    expect(server.requests).toHaveLength(2)
    const [first, second] = server.requests as [(typeof server.requests)[0], (typeof server.requests)[0]]
    expect(second.prompt.length).toBeLessThan(first.prompt.length)
    // The oldest blocks went, the newest stayed, and the prompt says so.
    expect(first.prompt).toContain('[User]: Request 1:')
    expect(second.prompt).not.toContain('[User]: Request 1:')
    const lastSummarized = r.plan!.transcript.at(-1)!
    expect(second.prompt).toContain(lastSummarized)
    expect(second.prompt).toMatch(/The \d+ oldest messages were left out/)
    expect(r.summary).toContain('RETRIED-SUMMARY')
  })

  it('gives up after 3 shrinking retries and falls back (HTTP 413 each time)', async () => {
    const s = smallSession(12)
    server.fallback = { status: 413, body: 'Request Entity Too Large' }
    try {
      const r = await compact(s, { summarizer })
      expect(server.requests).toHaveLength(4)
      const lengths = server.requests.map((q) => q.prompt.length)
      expect([...lengths].sort((a, b) => b - a)).toEqual(lengths)
      expect(new Set(lengths).size).toBe(4)
      expect(r).toMatchObject({ status: 'compacted', fallback: true })
      expect(r.error?.code).toBe('CF_PROMPT_TOO_LONG')
      expect(r.summary).toContain(EXTRACTIVE_NOTE)
    } finally {
      server.fallback = { text: '## Goal\n- default summary' }
    }
  })

  it('falls back to the extractive summary on HTTP 500', async () => {
    const s = smallSession()
    const before = s.length
    server.script({ status: 500, body: { error: { message: 'upstream overloaded' } } })
    const r = await compact(s, { summarizer })
    expect(r).toMatchObject({ status: 'compacted', fallback: true })
    expect(r.error).toMatchObject({ code: 'CF_SERVER', status: 500 })
    expect(r.reason).toMatch(/CF_SERVER.*upstream overloaded/)
    const { text } = expectCompacted(s, before, 3)
    expect(text).toContain(EXTRACTIVE_NOTE)
    // The extractive summary still names the files and the requests.
    expect(section(text, 'modified-files')).toContain('src/f1.ts')
    expect(text).toContain('Original request: Request 1:')
  })

  it('fails on HTTP 401 and leaves the session exactly as it was', async () => {
    const s = smallSession()
    const before = snapshot(s)
    server.script({ status: 401, body: { error: { message: 'Incorrect API key provided' } } })
    const r = await compact(s, { summarizer })
    expect(r).toMatchObject({ status: 'failed', fallback: false })
    expect(r.error).toMatchObject({ code: 'CF_AUTH', status: 401, name: 'AuthError' })
    expect(r.reason).toMatch(/Incorrect API key/)
    expect(snapshot(s)).toEqual(before)
  })

  it('fails on HTTP 429 without touching the session', async () => {
    const s = smallSession()
    const before = snapshot(s)
    server.script({ status: 429, body: { error: { message: 'Rate limit reached' } } })
    const r = await compact(s, { summarizer })
    expect(r).toMatchObject({ status: 'failed', error: { code: 'CF_RATE_LIMITED' } })
    expect(snapshot(s)).toEqual(before)
  })

  it('fails with CF_NETWORK when the endpoint is unreachable, session unchanged', async () => {
    const closed = new FakeOpenAI()
    await closed.start()
    const deadURL = closed.baseURL
    await closed.close()
    const s = smallSession()
    const before = snapshot(s)
    const r = await compact(s, { summarizer: openAICompatibleSummarizer({ baseURL: deadURL, model: 'm' }) })
    expect(r).toMatchObject({ status: 'failed', fallback: false, error: { code: 'CF_NETWORK' } })
    expect(snapshot(s)).toEqual(before)
  })

  it('an abort while the answer is on its way rejects with AbortError and leaves the session unchanged', async () => {
    const s = smallSession()
    const before = snapshot(s)
    server.script({ hang: true })
    const ac = new AbortController()
    const pending = compact(s, { summarizer, signal: ac.signal })
    const req = await server.request(0)
    expect(s.length).toBe(before.length) // mid-call: nothing written yet
    ac.abort()
    const err = await pending.then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string },
    )
    expect(err).toBeInstanceOf(Error)
    expect(err!.name).toBe('AbortError')
    expect(err!.code).toBe('CF_ABORTED')
    await req.closedEarly // the HTTP request itself was cancelled
    expect(snapshot(s)).toEqual(before)
    // The session still compacts normally afterwards.
    server.script({ text: '## Goal\n- after abort' })
    expect((await compact(s, { summarizer })).status).toBe('compacted')
  })

  it('a signal aborted before the call rejects without contacting the server', async () => {
    const s = smallSession()
    const before = snapshot(s)
    await expect(compact(s, { summarizer, signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError', code: 'CF_ABORTED' })
    expect(server.requests).toHaveLength(0)
    expect(snapshot(s)).toEqual(before)
  })

  it('two compactions in a row: the second prompt updates the first summary, and the file lists carry over', async () => {
    const s = smallSession(8)
    server.script({ text: '## Goal\n- FIRST-SUMMARY-BODY\n\n## Relevant Files\n- src/f1.ts: first' })
    const first = await compact(s, { summarizer })
    expect(first.status).toBe('compacted')
    const firstFiles = first.plan!.modifiedFiles
    // More work: new files.
    for (let t = 20; t < 26; t++) {
      s.append({ id: `u${t}`, role: 'user', parts: [{ type: 'text', id: `pu${t}`, text: `Later request ${t} ${'word '.repeat(40)}` }] })
      s.append({
        id: `a${t}`,
        role: 'assistant',
        parts: [{ type: 'tool', id: `pt${t}`, callID: `c${t}`, tool: 'write', state: { status: 'completed', input: { path: `src/late${t}.ts` }, output: 'ok '.repeat(60) } }],
      })
    }
    server.script({ text: '## Goal\n- SECOND-SUMMARY-BODY' })
    const second = await compact(s, { summarizer })
    expect(second.status).toBe('compacted')
    const prompt = server.requests[1]!.prompt
    // Anchored update: the first summary's body (not its framing or file lists) is the previous summary.
    const previous = section(prompt, 'previous-summary')!
    expect(previous).toContain('FIRST-SUMMARY-BODY')
    expect(previous).not.toContain(SUMMARY_HEADER)
    expect(previous).not.toContain('modified-files>')
    expect(prompt).toContain('Update the anchored summary in <previous-summary>')
    expect(countLines(prompt, '<conversation>')).toBe(1)
    // The earlier summary is not re-serialized into the conversation.
    expect(section(prompt, 'conversation')).not.toContain('FIRST-SUMMARY-BODY')
    // Cumulative files: the first range's files are still listed, the new ones added.
    const listed = section(second.summary!, 'modified-files')!.split('\n')
    for (const f of firstFiles) expect(listed).toContain(f)
    expect(listed).toContain('src/late20.ts') // summarized now (the newest ones are in the kept tail)
    expect(section(prompt, 'modified-files')!.split('\n')).toEqual(listed)
    // Only the newest summary is in the context.
    const summaries = s.context().filter((m) => m.summary)
    expect(summaries).toHaveLength(1)
    expect(JSON.stringify(summaries[0])).toContain('SECOND-SUMMARY-BODY')
  })
})
