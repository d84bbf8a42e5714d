// Importing transcripts of other agents (../shared/corpus) and exporting to the Anthropic and
// OpenAI chat shapes.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { describe, expect, it } from 'vitest'

import {
  Session,
  filterCompacted,
  importTranscript,
  importTranscriptAsync,
  toModelMessages,
} from '../native.js'
import type { AnthropicRequest, ImportResult, Message, OpenAIChatMessage, TranscriptFormat } from '../native.js'
import { INTERRUPTED, MODEL } from './helpers.js'

const CORPUS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'shared', 'corpus')
const corpus = (file: string) => join(CORPUS, file)

const ONE_PER_FORMAT: Array<[TranscriptFormat, string]> = [
  ['claude-code', 'claude-code/entirecli-5a3bb1c8-tiny.jsonl'],
  ['codex', 'codex/agentv-019ed836-small.jsonl'],
  ['pi', 'pi/pi-mono-session-custom-tool-v1.jsonl'],
  ['swe-agent', 'swe-agent/pydicom-1458-gpt4-textaction.traj'],
  ['mini-swe-agent', 'mini-swe-agent/github-issue-textaction-v1.traj.json'],
  ['openhands', 'openhands/oh-wrong-initial-state.json'],
  ['openai-chat', 'openai-chat/swesmith-ft-xml-3convs.jsonl'],
  ['kimi-cli', 'kimi-cli/sklearn-26323-subagent-read1.jsonl'],
  ['copilot-cli', 'copilot-cli/agentv-copilot-10fb4666.jsonl'],
  ['gemini-cli', 'gemini-cli/entirecli-gemini-session.json'],
]

const OPENCODE_EXPORT = {
  info: { id: 'ses_1', title: 'demo' },
  messages: [
    { info: { id: 'msg_u', role: 'user' }, parts: [{ id: 'prt_1', type: 'text', text: 'list files' }] },
    {
      info: { id: 'msg_a', role: 'assistant', parentID: 'msg_u', finish: 'tool-calls' },
      parts: [{ id: 'prt_2', type: 'tool', callID: 'c1', tool: 'bash', state: { status: 'completed', input: { command: 'ls' }, output: 'a b' } }],
    },
  ],
}

/** Every tool call is answered right after it, in each shape. */
function expectAiSdkPairs(out: any[]) {
  out.forEach((m, i) => {
    const calls = m.role === 'assistant' ? m.content.filter((c: any) => c.type === 'tool-call').map((c: any) => c.toolCallId) : []
    if (calls.length) expect(out[i + 1].content.map((r: any) => r.toolCallId)).toEqual(calls)
  })
}

function expectAnthropicRules(req: AnthropicRequest) {
  const msgs = req.messages
  if (!msgs.length) return
  expect(msgs[0].role).toBe('user')
  msgs.forEach((m, i) => {
    if (i > 0) expect(m.role).not.toBe(msgs[i - 1].role)
    const results = m.content.filter((b) => b.type === 'tool_result').map((b: any) => b.tool_use_id)
    const prevCalls = i > 0 ? msgs[i - 1].content.filter((b) => b.type === 'tool_use').map((b: any) => b.id) : []
    expect(results).toEqual(prevCalls)
    expect(m.content.slice(0, results.length).every((b) => b.type === 'tool_result')).toBe(true)
  })
  expect(msgs.at(-1)!.content.some((b) => b.type === 'tool_use')).toBe(false)
}

function expectOpenAIRules(msgs: OpenAIChatMessage[]) {
  for (let i = 0; i < msgs.length; ) {
    const m = msgs[i++]
    expect(m.role).not.toBe('tool')
    if (m.role !== 'assistant' || !m.tool_calls) continue
    const answered: string[] = []
    while (i < msgs.length && msgs[i].role === 'tool') answered.push((msgs[i++] as any).tool_call_id)
    expect(answered).toEqual(m.tool_calls.map((c) => c.id))
  }
}

describe('importTranscript', () => {
  it('reads a file by path and the same text given directly', () => {
    const path = corpus('claude-code/entirecli-5a3bb1c8-tiny.jsonl')
    const byPath = importTranscript({ path })
    const byText = importTranscript({ text: readFileSync(path, 'utf8') })
    expect(byText).toEqual(byPath)
    expect(byPath.format).toBe('claude-code')
    // 4 lines: a user prompt and one response split over three lines (thinking, text, tool_use).
    expect(byPath.stats).toMatchObject({ records: 4, toolCalls: 1, merged: 2 })
    expect(byPath.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(byPath.messages[1].parts.map((p) => p.type)).toEqual(['reasoning', 'text', 'tool'])
    expect(byPath.warnings).toEqual([])
  })

  it.each(ONE_PER_FORMAT)('detects %s', (format, file) => {
    const r = importTranscript({ path: corpus(file) })
    expect(r.format).toBe(format)
    expect(r.messages.length).toBeGreaterThan(0)
    const s = r.stats
    expect(r.messages.length).toBe(s.records - s.skipped - s.offBranch - s.merged + s.added)
    // The messages are valid session input.
    expect(Session.fromMessages(r.messages, { model: MODEL, tokenizer: 'estimate' }).length).toBe(r.messages.length)
  })

  it('detects opencode exports, and takes an explicit format', () => {
    const text = JSON.stringify(OPENCODE_EXPORT, null, 2)
    const r = importTranscript({ text })
    expect(r.format).toBe('opencode')
    expect(r.messages.map((m) => m.id)).toEqual(['msg_u', 'msg_a'])
    expect(importTranscript({ text }, { format: 'opencode' })).toEqual(r)
  })

  it('reports malformed lines as warnings with their line numbers', () => {
    const good = (uuid: string, parent: string | null, text: string) =>
      JSON.stringify({ type: 'user', uuid, parentUuid: parent, message: { role: 'user', content: text } })
    const text = [good('a', null, 'one'), '{"type": "user", "uuid": "b", "message": {', good('c', 'a', 'two'), 'not json at all'].join('\n')
    const r = importTranscript({ text })
    expect(r.messages.map((m) => m.parts[0])).toMatchObject([{ text: 'one' }, { text: 'two' }])
    expect(r.warnings.map((w) => w.line)).toEqual([2, 4])
    expect(r.warnings[0].message).toMatch(/malformed JSON/)
  })

  it('reads the corpus file with two objects on one line without a warning', () => {
    const r = importTranscript({ path: corpus('claude-code/entirecli-86cc3044-2malformed-lines.jsonl') })
    expect(r.warnings).toEqual([])
    expect(r.stats.records).toBe(205)
  })

  it('recognises compactions already in the file and hides what they hid', () => {
    const r = importTranscript({ path: corpus('claude-code/entirecli-6113e919-3compactions.jsonl') })
    expect(r.stats.compactions).toBe(3)
    const visible = filterCompacted(r.messages)
    const lastRequest = r.messages.findLastIndex((m) => m.parts.some((p) => p.type === 'compaction'))
    expect(visible.map((m) => m.id)).toEqual(r.messages.slice(lastRequest).map((m) => m.id))
    expect(visible[1]).toMatchObject({ role: 'assistant', summary: true, finish: 'stop' })
  })

  it('gives unanswered calls the interrupted result', () => {
    // 18 calls of aborted or failed turns never got a result; the failed answers (16 calls) are
    // left out of model messages, the aborted ones that produced output are sent.
    const r = importTranscript({ path: corpus('pi/pi-mono-large-session-v1.jsonl') })
    const pending = (m: Message) => m.parts.filter((p: any) => p.type === 'tool' && p.state.status === 'pending').length
    expect(r.messages.reduce((n, m) => n + pending(m), 0)).toBe(18)
    const sent = r.messages.filter((m) => !m.error || m.error.name === 'MessageAbortedError')
    expect(sent.reduce((n, m) => n + pending(m), 0)).toBe(2)
    const out = toModelMessages(r.messages)
    const interrupted = out.flatMap((m: any) => (m.role === 'tool' ? m.content : [])).filter((c: any) => c.output.value === INTERRUPTED)
    expect(interrupted.length).toBe(2)
    expectAiSdkPairs(out)
    for (const format of ['anthropic', 'openai'] as const) {
      expect(JSON.stringify(toModelMessages(r.messages, { format })).split(INTERRUPTED).length - 1).toBe(2)
    }
  })

  it('fails with coded errors on unreadable input', () => {
    expect(() => importTranscript({ path: '/no/such/file.jsonl' })).toThrow(expect.objectContaining({ code: 'CF_NOT_FOUND' }))
    expect(() => importTranscript({ text: '{"hello": 1}' })).toThrow(expect.objectContaining({ code: 'CF_UNKNOWN_FORMAT' }))
    expect(() => importTranscript({ text: '[]' }, { format: 'nope' as any })).toThrow(expect.objectContaining({ code: 'CF_INVALID_ARGUMENT' }))
    // The source says what it is: a path is never read as text, nor text as a path.
    expect(() => importTranscript({ text: '/no/such/file.jsonl' })).toThrow(expect.objectContaining({ code: 'CF_UNKNOWN_FORMAT' }))
    for (const bad of ['[]', {}, { path: 'a.jsonl', text: '[]' }, { path: 1 }, null]) {
      expect(() => importTranscript(bad as any)).toThrow(expect.objectContaining({ code: 'CF_INVALID_ARGUMENT', message: expect.stringContaining('{ path: string } or { text: string }') }))
    }
  })

  it('has an async variant that can be aborted', async () => {
    const path = corpus('codex/agentv-019ed99c-3compactions.jsonl')
    const r: ImportResult = await importTranscriptAsync({ path })
    expect(r).toEqual(importTranscript({ path }))
    const ac = new AbortController()
    ac.abort()
    await expect(importTranscriptAsync({ path }, undefined, ac.signal)).rejects.toMatchObject({ name: 'AbortError', code: 'CF_ABORTED' })
  })
})

describe('toModelMessages formats', () => {
  const imported = ONE_PER_FORMAT.map(([, file]) => importTranscript({ path: corpus(file) }).messages)

  it('anthropic: starts with a user message, alternates roles, results follow their calls', () => {
    for (const msgs of imported) {
      const req = toModelMessages(msgs, { format: 'anthropic' })
      expectAnthropicRules(req)
      for (const m of req.messages) for (const b of m.content) if (b.type === 'tool_use') expect(b.id).toMatch(/^[A-Za-z0-9_-]+$/)
    }
  })

  it('anthropic: system messages go to `system`, images become base64 sources', () => {
    const msgs: Message[] = [
      { id: 's', role: 'system', parts: [{ type: 'text', id: 'a', text: 'be brief' }] },
      { id: 'a0', role: 'assistant', parts: [{ type: 'text', id: 'b', text: 'hello' }] },
      { id: 'u', role: 'user', parts: [{ type: 'text', id: 'c', text: 'see' }, { type: 'file', id: 'd', mime: 'image/png', url: 'data:image/png;base64,AAAA' }] },
      { id: 'u2', role: 'user', parts: [{ type: 'text', id: 'e', text: 'and this' }] },
    ]
    // A cache breakpoint on the system prompt makes it a text block; without breakpoints, a string.
    expect(toModelMessages(msgs, { format: 'anthropic' }).system).toEqual([{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }])
    const req = toModelMessages(msgs, { format: 'anthropic', cacheBreakpoints: false })
    expect(req.system).toBe('be brief')
    expect(req.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(req.messages[2].content).toEqual([
      { type: 'text', text: 'see' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
      { type: 'text', text: 'and this' },
    ])
  })

  it('openai: tool messages answer each call right after it; arguments are JSON strings', () => {
    for (const msgs of imported) {
      const out = toModelMessages(msgs, { format: 'openai' })
      expectOpenAIRules(out)
      for (const m of out) if (m.role === 'assistant') for (const c of m.tool_calls ?? []) expect(typeof JSON.parse(c.function.arguments)).toBe('object')
    }
  })

  it('works on a Session too, and rejects unknown formats', () => {
    const r = importTranscript({ path: corpus('pi/pi-mono-session-custom-tool-v1.jsonl') })
    const s = Session.fromMessages(r.messages, { model: MODEL, tokenizer: 'estimate' })
    expectAiSdkPairs(s.toModelMessages())
    expectAnthropicRules(s.toModelMessages({ format: 'anthropic' }))
    const openai = s.toModelMessages({ format: 'openai' })
    expectOpenAIRules(openai)
    // The session's context starts at pi's compaction: request, then its summary.
    expect(openai.slice(0, 2).map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(() => s.toModelMessages({ format: 'gemini' as any })).toThrow(expect.objectContaining({ code: 'CF_INVALID_ARGUMENT' }))
  })
})

// Shapes the corpus lacks, as other agents write them (`__test__/fixtures/transcripts/`).
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'transcripts')
const fixture = (file: string) => join(FIXTURES, file)
const tools = (msgs: Message[]) => msgs.flatMap((m) => m.parts.filter((p): p is Extract<typeof p, { type: 'tool' }> => p.type === 'tool'))

describe('importTranscript on shapes the corpus lacks', () => {
  it('claude-code: parallel calls chained through a result or a progress line stay, with their results', () => {
    const r = importTranscript({ path: fixture('claude-code-parallel-calls.jsonl') })
    expect(tools(r.messages).map((t) => [t.callID, t.state.status])).toEqual([
      ['toolu_A', 'completed'],
      ['toolu_B', 'completed'],
      ['toolu_C', 'error'],
      ['toolu_D', 'completed'],
    ])
    expect(r.stats.toolCalls).toBe(4)
    expect(r.warnings.map((w) => w.line)).toEqual([2, 6, 11])
  })

  it('codex: a view_image output is an image attachment: media, stripped by stripMedia, never base64 text', () => {
    const r = importTranscript({ path: fixture('codex-view-image.jsonl') })
    const view = tools(r.messages).find((t) => t.callID === 'call_view1')!
    expect(view.state).toMatchObject({ status: 'completed', output: '', attachments: [{ mime: 'image/png' }] })
    const s = Session.fromMessages(r.messages, { model: MODEL, tokenizer: 'o200k' })
    expect(s.breakdown().media).toBe(2 * 1200)
    expect(s.breakdown().toolOutput).toBeLessThan(100)
    const stripped = JSON.stringify(s.toModelMessages({ format: 'openai', stripMedia: true }))
    expect(stripped).not.toContain('base64')
    expect(stripped).toContain('[Attached image/png: file]')
    const anthropic = s.toModelMessages({ format: 'anthropic' })
    const images = anthropic.messages.flatMap((m) => m.content).flatMap((b: any) => (b.type === 'tool_result' ? b.content : [])).filter((b: any) => b.type === 'image')
    expect(images.length).toBe(2)
  })

  it('claude-code: microcompact boundaries clear images and error results from the context and the output', () => {
    const r = importTranscript({ path: fixture('claude-code-microcompact-images.jsonl') })
    expect(r.warnings).toEqual([])
    const files = r.messages.flatMap((m) => m.parts.filter((p) => p.type === 'file'))
    expect(files.length).toBe(2)
    expect(files.every((f) => typeof f.compactedAt === 'number' && String(f.url).startsWith('data:image/png'))).toBe(true)
    const s = Session.fromMessages(r.messages, { model: MODEL, tokenizer: 'o200k' })
    expect(s.breakdown().media).toBe(0)
    const req = s.toModelMessages({ format: 'anthropic', cacheBreakpoints: false })
    const blocks = req.messages.flatMap((m) => m.content) as any[]
    expect(blocks.some((b) => b.type === 'image')).toBe(false)
    expect(blocks.filter((b) => b.type === 'text' && b.text === '[Cleared image/png: file]').length).toBe(2)
    const grep = blocks.find((b) => b.type === 'tool_result' && b.tool_use_id === 'toolu_grep')
    expect(grep).toMatchObject({ is_error: true, content: [{ type: 'text', text: '[Old tool result content cleared]' }] })
  })

  it('gemini-cli: a saved chat (Content[]) is detected and read, its state snapshot a compaction', () => {
    const r = importTranscript({ path: fixture('gemini-cli-saved-chat.json') })
    expect(r.format).toBe('gemini-cli')
    expect(r.stats.compactions).toBe(1)
    expect(importTranscript({ path: fixture('gemini-cli-saved-chat.json') }, { format: 'gemini-cli' })).toEqual(r)
    const visible = filterCompacted(r.messages)
    expect(visible[1]).toMatchObject({ role: 'assistant', summary: true })
    expect(visible.length).toBe(r.messages.length)
    expect(tools(r.messages).every((t) => t.state.status === 'completed' || t.state.status === 'error')).toBe(true)
    expect(importTranscript({ path: fixture('gemini-cli-session.jsonl') }).messages.map((m) => m.id)).toEqual(['m1', 'm2', 'm5', 'm6'])
  })

  it('openhands: reasoning_content is reasoning', () => {
    const r = importTranscript({ path: fixture('openhands-v1-reasoning.json') })
    const reasoning = r.messages.flatMap((m) => m.parts.filter((p) => p.type === 'reasoning'))
    expect(reasoning.length).toBe(4)
  })

  it.each([
    ['kimi-cli-usage.jsonl', 3822],
    ['copilot-cli-usage.jsonl', 18498],
  ])('%s: the usage the agent recorded is what the session counts', (file, recorded) => {
    const r = importTranscript({ path: fixture(file) })
    const s = Session.fromMessages(r.messages, { model: MODEL, tokenizer: 'o200k' })
    expect(s.usage()).toMatchObject({ tokens: recorded, source: 'usage' })
  })
})
