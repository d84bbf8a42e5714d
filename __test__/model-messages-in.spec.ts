// AI SDK ModelMessages into a native Session without loss: every message and part shape of ai v5,
// v6 and v7 (provider options, reasoning signatures, binary data, every tool output, approvals,
// provider-executed calls, parts contextfold does not know) comes back from `toModelMessages()` as
// it went in, whether taken at once (`fromModelMessages`), step by step (`appendModelMessages`) or
// from the whole array each time (`syncModelMessages`). Real `response.messages` of ai v5 and v6
// tool loops are the fixtures; a fast-check property covers random conversations.
import { generateText, stepCountIs, tool } from 'ai'
import { MockLanguageModelV2 } from 'ai/test'
import { generateText as generateText6, stepCountIs as stepCountIs6, tool as tool6 } from 'ai-v6'
import { MockLanguageModelV3 } from 'ai-v6/test'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'

import { Session, importTranscript, type SessionOptions, type ToolPart } from '../dist/index.js'
import { type ModelMessageLike } from '../dist/native.js'

const OPTIONS: SessionOptions = { model: { limit: { context: 200_000, output: 32_000 } }, tokenizer: 'o200k' }

/** A finished tool loop's whole conversation: the prompt and `response.messages`. */
async function v5Loop(): Promise<ModelMessageLike[]> {
  const prompt = [{ role: 'user' as const, content: 'Read a.ts, then fail on b.ts.' }]
  const steps = [
    {
      content: [
        { type: 'reasoning' as const, text: 'Two reads.', providerMetadata: { anthropic: { signature: 'sig-1' } } },
        { type: 'tool-call' as const, toolCallId: 'c1', toolName: 'read', input: JSON.stringify({ path: 'a.ts' }) },
        { type: 'tool-call' as const, toolCallId: 'c2', toolName: 'read', input: JSON.stringify({ path: 'b.ts' }) },
      ],
      finishReason: 'tool-calls' as const,
      usage: { inputTokens: 100, outputTokens: 10, totalTokens: 110 },
      warnings: [],
    },
    { content: [{ type: 'text' as const, text: 'a.ts read; b.ts is missing.' }], finishReason: 'stop' as const, usage: { inputTokens: 200, outputTokens: 5, totalTokens: 205 }, warnings: [] },
  ]
  const model = new MockLanguageModelV2({ doGenerate: async () => steps.shift()! })
  const read = tool({
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => {
      if (path === 'b.ts') throw new Error('ENOENT: b.ts')
      return { path, text: 'export const a = 1' }
    },
  })
  const r = await generateText({ model, tools: { read }, stopWhen: stepCountIs(5), messages: prompt })
  return [...prompt, ...(r.response.messages as ModelMessageLike[])]
}

async function v6Loop(): Promise<ModelMessageLike[]> {
  const prompt = [{ role: 'system' as const, content: 'You are terse.' }, { role: 'user' as const, content: [{ type: 'text' as const, text: 'List src.' }] }]
  const usage = { inputTokens: { total: 100, noCache: 60, cacheRead: 40, cacheWrite: 0 }, outputTokens: { total: 10, text: 8, reasoning: 2 } }
  const steps = [
    { content: [{ type: 'tool-call' as const, toolCallId: 'c1', toolName: 'ls', input: JSON.stringify({ dir: 'src' }) }], finishReason: { unified: 'tool-calls' as const, raw: 'tool_use' }, usage, warnings: [] },
    { content: [{ type: 'text' as const, text: 'src has 2 files.', providerMetadata: { openai: { itemId: 'msg_1' } } }], finishReason: { unified: 'stop' as const, raw: 'end_turn' }, usage, warnings: [] },
  ]
  const model = new MockLanguageModelV3({ doGenerate: async () => steps.shift()! })
  const ls = tool6({ inputSchema: z.object({ dir: z.string() }), execute: async () => 'a.ts\nb.ts' })
  const r = await generateText6({ model, tools: { ls }, stopWhen: stepCountIs6(5), messages: prompt })
  return [...prompt, ...(r.response.messages as ModelMessageLike[])]
}

/** Every shape the ModelMessage unions of ai v5, v6 and v7 allow, with provider options throughout. */
function everyShape(): ModelMessageLike[] {
  const po = (k: string) => ({ anthropic: { cacheControl: { type: 'ephemeral' }, note: k } })
  return [
    { role: 'system', content: 'System prompt.', providerOptions: po('system') },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Look at these.', providerOptions: po('text') },
        { type: 'image', image: new Uint8Array([137, 80, 78, 71]), mediaType: 'image/png' },
        { type: 'image', image: 'iVBORw0KGgo=' },
        { type: 'image', image: new URL('https://example.com/cat.png') },
        { type: 'file', data: Buffer.from('%PDF-1.7'), mediaType: 'application/pdf', filename: 'spec.pdf' },
        { type: 'file', data: new Uint8Array([1, 2, 3]).buffer, mediaType: 'application/octet-stream' },
        { type: 'file', data: 'data:text/plain;base64,aGk=', mediaType: 'text/plain' },
        { type: 'file', data: { type: 'data', data: 'aGVsbG8=' }, mediaType: 'text/plain' },
        { type: 'file', data: { type: 'url', url: new URL('https://example.com/notes.md') }, mediaType: 'text/markdown' },
      ],
      providerOptions: po('user'),
    },
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Plan.', providerOptions: { anthropic: { signature: 'sig' } } },
        { type: 'text', text: 'Running tools.' },
        { type: 'tool-call', toolCallId: 't1', toolName: 'read', input: { path: 'a.ts' }, providerOptions: po('call') },
        { type: 'tool-call', toolCallId: 't2', toolName: 'json', input: {} },
        { type: 'tool-call', toolCallId: 't3', toolName: 'fail', input: { x: 1 } },
        { type: 'tool-call', toolCallId: 't4', toolName: 'failJson', input: {} },
        { type: 'tool-call', toolCallId: 't5', toolName: 'shot', input: {} },
        { type: 'tool-call', toolCallId: 't6', toolName: 'rm', input: { path: '/' } },
        { type: 'tool-approval-request', approvalId: 'ap1', toolCallId: 't6' },
        { type: 'tool-call', toolCallId: 'ws1', toolName: 'web_search', input: { q: 'x' }, providerExecuted: true },
        { type: 'tool-result', toolCallId: 'ws1', toolName: 'web_search', output: { type: 'json', value: [{ url: 'https://x' }] } },
        { type: 'custom', kind: 'openai.compaction', providerOptions: { openai: { itemId: 'cmp_1', encryptedContent: 'enc' } } },
        { type: 'reasoning-file', data: 'aGk=', mediaType: 'image/png' },
      ],
      providerOptions: po('assistant'),
    },
    {
      role: 'tool',
      content: [
        { type: 'tool-approval-response', approvalId: 'ap1', approved: false, reason: 'no' },
        { type: 'tool-result', toolCallId: 't1', toolName: 'read', output: { type: 'text', value: 'export {}' }, providerOptions: po('result') },
        { type: 'tool-result', toolCallId: 't2', toolName: 'json', output: { type: 'json', value: { a: [1, 2.5, null, 'x'] } } },
        { type: 'tool-result', toolCallId: 't3', toolName: 'fail', output: { type: 'error-text', value: 'boom' } },
        { type: 'tool-result', toolCallId: 't4', toolName: 'failJson', output: { type: 'error-json', value: { code: 7 } } },
        {
          type: 'tool-result',
          toolCallId: 't5',
          toolName: 'shot',
          output: { type: 'content', value: [{ type: 'text', text: 'screenshot:' }, { type: 'media', data: 'iVBORw0KGgo=', mediaType: 'image/png' }] },
        },
        { type: 'tool-result', toolCallId: 't6', toolName: 'rm', output: { type: 'execution-denied', reason: 'no' } },
      ],
      providerOptions: po('tool'),
    },
    { role: 'assistant', content: 'Done.' },
  ]
}

describe('Session.fromModelMessages', () => {
  it.each([
    ['ai v5 tool loop (reasoning signature, json output, a thrown tool error)', v5Loop],
    ['ai v6 tool loop (system prompt, provider metadata)', v6Loop],
    ['every message and part shape', async () => everyShape()],
  ])('%s: toModelMessages() gives back what went in', async (_name, make) => {
    const input = await make()
    const s = Session.fromModelMessages(input, OPTIONS)
    expect(s.toModelMessages()).toEqual(input)
  })

  it('binary data and URLs come back as the same kinds of object', () => {
    const input = everyShape()
    const [, user] = Session.fromModelMessages(input, OPTIONS).toModelMessages() as Array<{ content: Array<Record<string, unknown>> }>
    const kinds = user!.content.map((p) => {
      const data = p.image ?? p.data
      return data instanceof Object ? data.constructor.name : typeof data
    })
    expect(kinds).toEqual(['undefined', 'Uint8Array', 'string', 'URL', 'Buffer', 'ArrayBuffer', 'string', 'Object', 'Object'])
    expect(Buffer.from(user!.content[1]!.image as Uint8Array)).toEqual(Buffer.from([137, 80, 78, 71]))
  })

  it('a tool call and its result become one tool part; the media counts at its fixed cost', () => {
    const s = Session.fromModelMessages(everyShape(), OPTIONS)
    const assistant = s.messages().find((m) => m.role === 'assistant')!
    const tools = assistant.parts.filter((p): p is ToolPart => p.type === 'tool')
    expect(tools.map((t) => [t.callID, t.state.status])).toEqual([
      ['t1', 'completed'],
      ['t2', 'completed'],
      ['t3', 'error'],
      ['t4', 'error'],
      ['t5', 'completed'],
      ['t6', 'error'],
      ['ws1', 'completed'],
    ])
    expect(s.messages().length).toBe(4)
  })

  it('a part it does not know is kept in place, counted by its size and reported once', () => {
    const unknown = { type: 'x-thing', payload: 'y'.repeat(4000) }
    const input: ModelMessageLike[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'a' }, unknown, { ...unknown, payload: 'z' }] },
    ]
    const bare = Session.fromModelMessages([input[0]!, { role: 'assistant', content: [{ type: 'text', text: 'a' }] }], OPTIONS)
    const s = new Session(OPTIONS)
    const r = s.appendModelMessages(input)
    expect(r.warnings.filter((w) => w.message.includes('x-thing'))).toHaveLength(1)
    expect(s.toModelMessages()).toEqual(input)
    expect(s.usage().tokens - bare.usage().tokens).toBeGreaterThan(400)
  })
})

describe('appendModelMessages and syncModelMessages', () => {
  it('step by step equals all at once; a tool message completes the answer before it', async () => {
    const all = await v5Loop()
    const once = Session.fromModelMessages(all, OPTIONS)
    const steps = new Session(OPTIONS)
    const results = all.map((m) => steps.appendModelMessages([m]))
    expect(results[2]).toMatchObject({ status: 'appended', appended: [], updated: [results[1]!.appended[0]] })
    expect(steps.toModelMessages()).toEqual(all)
    expect(steps.messages()).toEqual(once.messages())
  })

  it("a step's usage, in any AI SDK shape, goes on its answer and counts the cache once", async () => {
    const all = await v6Loop()
    const s = new Session(OPTIONS)
    s.appendModelMessages(all.slice(0, 2))
    s.appendModelMessages(all.slice(2, 3), { usage: { inputTokens: { total: 100, noCache: 60, cacheRead: 40, cacheWrite: 0 }, outputTokens: { total: 10, text: 8, reasoning: 2 } } })
    const answer = s.messages().at(-1)!
    expect(answer.tokens).toEqual({ input: 60, output: 10, reasoning: 2, cacheRead: 40, total: 110 })
    expect(s.usage().source).toBe('usage')
    expect(s.usage().tokens).toBe(110)
  })

  it('sync takes only what is new, is idempotent, and reports a different conversation instead of duplicating', async () => {
    const all = await v5Loop()
    const s = new Session(OPTIONS)
    expect(s.syncModelMessages(all.slice(0, 2))).toMatchObject({ status: 'appended', count: 2 })
    expect(s.syncModelMessages(all.slice(0, 2))).toMatchObject({ status: 'unchanged', appended: [], count: 2 })
    expect(s.syncModelMessages(all)).toMatchObject({ status: 'appended', count: all.length })
    expect(s.syncModelMessages(all)).toMatchObject({ status: 'unchanged' })
    expect(s.toModelMessages()).toEqual(all)
    const edited = [{ role: 'user' as const, content: 'Something else.' }, ...all.slice(1)]
    expect(s.syncModelMessages(edited)).toMatchObject({ status: 'diverged', appended: [] })
    expect(s.syncModelMessages(all.slice(0, 1))).toMatchObject({ status: 'diverged' })
    expect(s.toModelMessages()).toEqual(all)
  })
})

describe('usage counts what is sent', () => {
  it('setOverhead adds the system prompt and the tool definitions until a usage report covers them', () => {
    const s = Session.fromModelMessages([{ role: 'user', content: 'hi' }], OPTIONS)
    const before = s.usage().tokens
    const tools = [{ name: 'read', description: 'Read a file. '.repeat(50), inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }]
    const overhead = s.setOverhead({ system: 'You are a coding agent. '.repeat(40), tools })
    expect(overhead).toBeGreaterThan(300)
    expect(s.usage().tokens).toBe(before + overhead)
    s.appendModelMessages([{ role: 'assistant', content: 'ok' }], { usage: { inputTokens: 900, outputTokens: 1, totalTokens: 901 } })
    expect(s.usage()).toMatchObject({ source: 'usage', tokens: 901 })
  })

  it('a tool output counts as toolOutputMaxChars sends it', () => {
    const big: ModelMessageLike[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 'cat', input: {} }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 'cat', output: { type: 'text', value: 'line of output\n'.repeat(5000) } }] },
    ]
    const full = Session.fromModelMessages(big, OPTIONS).usage().tokens
    const cut = Session.fromModelMessages(big, { ...OPTIONS, compaction: { toolOutputMaxChars: 2000 } })
    expect(full).toBeGreaterThan(15_000)
    expect(cut.usage().tokens).toBeLessThan(1_000)
  })
})

describe('importTranscript: ai-sdk', () => {
  it('detects a ModelMessage array and { messages } and imports tool calls', async () => {
    const all = await v5Loop()
    for (const text of [JSON.stringify(all), JSON.stringify({ messages: all })]) {
      const r = importTranscript({ text })
      expect(r.format).toBe('ai-sdk')
      expect(r.stats.toolCalls).toBe(2)
      expect(r.messages.flatMap((m) => m.parts).filter((p) => p.type === 'tool')).toHaveLength(2)
    }
  })
})

/** Random conversations over every ModelMessage variant, with valid tool pairing. */
const po = fc.option(fc.record({ prov: fc.record({ k: fc.oneof(fc.string(), fc.integer(), fc.boolean()) }) }), { nil: undefined })
const withPo = <T extends object>(arb: fc.Arbitrary<T>) =>
  fc.tuple(arb, po).map(([x, p]) => (p === undefined ? x : { ...x, providerOptions: p }))
const text = withPo(fc.record({ type: fc.constant('text'), text: fc.string() }))
const userPart = fc.oneof(
  text,
  withPo(fc.record({ type: fc.constant('image'), image: fc.uint8Array({ maxLength: 16 }), mediaType: fc.constant('image/png') })),
  withPo(fc.record({ type: fc.constant('file'), data: fc.base64String({ minLength: 4, maxLength: 16 }), mediaType: fc.constantFrom('application/pdf', 'text/plain') })),
  withPo(fc.record({ type: fc.constant('file'), data: fc.webUrl().map((u) => new URL(u)), mediaType: fc.constant('text/html') })),
)
const output = fc.oneof(
  fc.record({ type: fc.constant('text'), value: fc.string() }),
  // JSON has no -0: values as JSON can carry them.
  fc.record({ type: fc.constant('json'), value: fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown) }),
  fc.record({ type: fc.constant('error-text'), value: fc.string() }),
  fc.record({ type: fc.constant('error-json'), value: fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown) }),
  fc.record({ type: fc.constant('execution-denied'), reason: fc.string() }),
  fc.record({ type: fc.constant('content'), value: fc.array(fc.record({ type: fc.constant('text'), text: fc.string() }), { maxLength: 3 }) }),
)
const step = fc
  .tuple(
    fc.array(fc.oneof(text, withPo(fc.record({ type: fc.constant('reasoning'), text: fc.string() }))), { maxLength: 3 }),
    fc.array(fc.tuple(fc.constantFrom('read', 'bash', 'edit'), fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown), output, po), { maxLength: 3 }),
    po,
  )
  .map(([parts, calls, mpo]) => ({ parts, calls, mpo }))
const conversation = fc.array(fc.tuple(fc.oneof(fc.string(), fc.array(userPart, { minLength: 1, maxLength: 3 })), fc.array(step, { minLength: 1, maxLength: 3 })), {
  minLength: 1,
  maxLength: 4,
})

function build(turns: fc.Arbitrary<unknown> extends never ? never : Array<[unknown, Array<{ parts: object[]; calls: Array<[string, unknown, object, unknown]>; mpo: unknown }>]>): ModelMessageLike[] {
  const out: ModelMessageLike[] = []
  let n = 0
  for (const [content, steps] of turns) {
    out.push({ role: 'user', content })
    for (const s of steps) {
      const calls = s.calls.map(([toolName, input, output, p]) => ({ toolCallId: `call_${++n}`, toolName, input, output, p }))
      const assistant: ModelMessageLike = {
        role: 'assistant',
        content: [...s.parts, ...calls.map((c) => ({ type: 'tool-call', toolCallId: c.toolCallId, toolName: c.toolName, input: c.input }))],
      }
      if (s.mpo !== undefined) assistant.providerOptions = s.mpo as ModelMessageLike['providerOptions']
      out.push(assistant)
      if (calls.length) {
        out.push({
          role: 'tool',
          content: calls.map((c) => ({
            type: 'tool-result',
            toolCallId: c.toolCallId,
            toolName: c.toolName,
            output: c.output,
            ...(c.p === undefined ? {} : { providerOptions: c.p }),
          })),
        })
      }
    }
  }
  return out
}

describe('round trip property', () => {
  it('any conversation of ModelMessages comes back as it went in, at once and step by step', () => {
    fc.assert(
      fc.property(conversation, (turns) => {
        const input = build(turns as never)
        expect(Session.fromModelMessages(input, OPTIONS).toModelMessages()).toEqual(input)
        const s = new Session(OPTIONS)
        for (const m of input) s.appendModelMessages([m])
        expect(s.toModelMessages()).toEqual(input)
      }),
      { numRuns: 150 },
    )
  })

  it('a session rebuilt from its messages (as a store loads it) resumes where it was and takes only the rest', () => {
    fc.assert(
      fc.property(conversation, fc.nat(), (turns, pick) => {
        const input = build(turns as never)
        // Where a call can end: before a user message, or at the end.
        const ends = input.map((m, i) => (i > 0 && m.role === 'user' ? i : -1)).filter((i) => i > 0)
        ends.push(input.length)
        const k = ends[pick % ends.length]!
        const held = Session.fromModelMessages(input.slice(0, k), OPTIONS)
        const reloaded = Session.fromMessages(held.messages(), OPTIONS)
        expect(reloaded.resumeModelMessages(input)).toBe(k)
        const r = reloaded.syncModelMessages(input)
        expect(r.status).toBe(k === input.length ? 'unchanged' : 'appended')
        expect(reloaded.toModelMessages()).toEqual(input)
      }),
      { numRuns: 150 },
    )
  })
})

describe('resumeModelMessages', () => {
  it('null for another conversation or an empty session; a coded error for what is not an array', async () => {
    const all = await v5Loop()
    const s = Session.fromMessages(Session.fromModelMessages(all, OPTIONS).messages(), OPTIONS)
    expect(s.resumeModelMessages([{ role: 'user', content: 'Something else.' }])).toBeNull()
    expect(new Session(OPTIONS).resumeModelMessages(all)).toBeNull()
    expect(() => s.resumeModelMessages(42 as never)).toThrow(expect.objectContaining({ code: 'CF_INVALID_ARGUMENT' }))
    expect(s.resumeModelMessages(all)).toBe(all.length)
  })
})
