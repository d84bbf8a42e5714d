// Prompt caching: Anthropic cache breakpoints in `toModelMessages({ format: 'anthropic' })` and
// through the AI SDK middleware's providerOptions, and OpenAI's prompt cache key.
import * as ai from 'ai'
import { MockLanguageModelV2 } from 'ai/test'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'

import { contextfoldMiddleware } from '../dist/ai/index.js'
import { Session, type Message, type ToolState } from '../dist/index.js'
import { type AnthropicRequest } from '../dist/native.js'
import { MODEL } from './helpers.js'

const text = (id: string, role: Message['role'], t: string): Message => ({ id, role, parts: [{ type: 'text', id: `${id}t`, text: t }] })
const read = (id: string, output: string): Message => ({
  id,
  role: 'assistant',
  parts: [{ type: 'tool', id: `${id}p`, callID: `${id}c`, tool: 'read', state: { status: 'completed', input: { path: `${id}.rs` }, output, time: { start: 1, end: 2 } } as ToolState }],
})

/** `path -> cache_control` of every marked block. */
function marks(req: AnthropicRequest): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (Array.isArray(req.system)) req.system.forEach((b, i) => b.cache_control && (out[`system/${i}`] = b.cache_control))
  req.messages.forEach((m, i) => m.content.forEach((b, j) => b.cache_control && (out[`${i}/${j}`] = b.cache_control)))
  return out
}

describe("toModelMessages({ format: 'anthropic' }) cache breakpoints", () => {
  function session(): Session {
    const s = new Session({ model: MODEL, tokenizer: 'estimate', compaction: { pruneProtect: 600, pruneMinimum: 0, pruneProtectSteps: 0 } })
    s.append(text('s', 'system', 'be brief'))
    s.append(text('u1', 'user', 'fix the bug'))
    s.append(read('a1', 'fn main() {}\n'.repeat(400)))
    s.append(text('u2', 'user', 'now the tests'))
    s.append(read('a2', 'ok'))
    return s
  }

  it('marks the system prompt, the newest prune mark and the end; none when off; the 1-hour cache on request', () => {
    const s = session()
    const eph = { type: 'ephemeral' }
    // Turns: 0 "fix the bug", 1 a1's call, 2 its result, "now the tests", 3 a2's call, 4 its result.
    expect(marks(s.toModelMessages({ format: 'anthropic' }))).toEqual({ 'system/0': eph, '4/0': eph })
    expect(s.prune().prunedPartIDs).toContain('a1p')
    const pruned = s.toModelMessages({ format: 'anthropic' })
    expect(marks(pruned)).toEqual({ 'system/0': eph, '2/0': eph, '4/0': eph })
    expect(pruned.messages[2]!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'a1c' })
    const off = s.toModelMessages({ format: 'anthropic', cacheBreakpoints: false })
    expect(off.system).toBe('be brief')
    expect(marks(off)).toEqual({})
    const hour = marks(s.toModelMessages({ format: 'anthropic', cacheBreakpoints: { ttl: '1h' } }))
    expect(Object.values(hour)).toEqual([1, 2, 3].map(() => ({ type: 'ephemeral', ttl: '1h' })))
    expect(() => s.toModelMessages({ format: 'anthropic', cacheBreakpoints: { ttl: '2h' as '1h' } })).toThrow(
      expect.objectContaining({ code: 'CF_INVALID_ARGUMENT' }),
    )
  })

  it('keeps the earlier breakpoints on the same blocks when messages are appended', () => {
    const s = session()
    s.prune()
    const before = marks(s.toModelMessages({ format: 'anthropic' }))
    s.append(text('a3', 'assistant', 'all green'))
    s.append(text('u3', 'user', 'thanks'))
    const after = marks(s.toModelMessages({ format: 'anthropic' }))
    expect(after).toEqual({ 'system/0': before['system/0'], '2/0': before['2/0'], '6/0': { type: 'ephemeral' } })
  })

  it("keeps the app's own breakpoints (AI SDK providerOptions) and never exceeds four", () => {
    const hour = { anthropic: { cacheControl: { type: 'ephemeral', ttl: '1h' } } }
    const s = new Session({ model: MODEL, tokenizer: 'estimate' })
    s.appendModelMessages([
      { role: 'system', content: 'be brief', providerOptions: hour },
      { role: 'user', content: [{ type: 'text', text: 'one', providerOptions: hour }] },
      { role: 'assistant', content: 'two', providerOptions: hour },
      { role: 'user', content: 'three' },
      { role: 'assistant', content: 'four' },
      { role: 'user', content: 'five' },
    ])
    const m = marks(s.toModelMessages({ format: 'anthropic' }))
    // The app's three as it set them, ours at the end only.
    expect(m).toEqual({ 'system/0': hour.anthropic.cacheControl, '0/0': hour.anthropic.cacheControl, '1/0': hour.anthropic.cacheControl, '4/0': { type: 'ephemeral' } })
  })
})

/** Anthropic cache controls a prompt carries, on messages or parts, by message index. */
function promptMarks(prompt: readonly any[]): Array<[number, unknown]> {
  const out: Array<[number, unknown]> = []
  prompt.forEach((m, i) => {
    const own = m.providerOptions?.anthropic?.cacheControl
    if (own) out.push([i, own])
    if (Array.isArray(m.content)) for (const p of m.content) if (p.providerOptions?.anthropic?.cacheControl) out.push([i, p.providerOptions.anthropic.cacheControl])
  })
  return out
}

const usage = { inputTokens: undefined, outputTokens: undefined, totalTokens: undefined }

/** A mock model of `provider` recording each call; it answers summary requests with a summary. */
function mock(provider: string, calls: any[]) {
  return new MockLanguageModelV2({
    provider,
    modelId: 'claude-sonnet-4',
    doGenerate: async (options) => {
      calls.push(options)
      const summary = JSON.stringify(options.prompt).includes('<conversation>')
      return { content: [{ type: 'text', text: summary ? '## Goal\n- keep going' : 'word '.repeat(3_000) }], finishReason: 'stop', usage, warnings: [] }
    },
  })
}

describe('contextfoldMiddleware prompt caching', () => {
  it("puts Anthropic breakpoints on the system prompt, the summary and the last message, keeping the app's", async () => {
    const calls: any[] = []
    const compacted: string[] = []
    const model = ai.wrapLanguageModel({
      model: mock('anthropic.messages', calls),
      middleware: contextfoldMiddleware({ contextWindow: 16_000, maxOutputTokens: 1_000, onCompaction: ({ result }) => compacted.push(result.status) }),
    })
    const mine = { type: 'ephemeral', ttl: '1h' }
    const messages: ai.ModelMessage[] = [{ role: 'system', content: 'be brief', providerOptions: { anthropic: { cacheControl: mine } } }]
    for (let turn = 0; turn < 8; turn++) {
      messages.push({ role: 'user', content: `Question ${turn}: go on.` })
      const r = await ai.generateText({ model, messages, maxOutputTokens: 1_000 })
      messages.push(...r.response.messages)
    }
    expect(compacted).toContain('compacted')
    let summaries = 0
    for (const { prompt } of calls) {
      const found = promptMarks(prompt)
      expect(found.length).toBeLessThanOrEqual(4)
      // The app's breakpoint on the system prompt as it set it, and not a second one there.
      expect(found.filter(([i]) => i === 0)).toEqual([[0, mine]])
      expect(found).toContainEqual([prompt.length - 1, { type: 'ephemeral' }])
      const summary = prompt.findIndex((m: any) => JSON.stringify(m).includes('context-summary'))
      if (summary > 0) {
        summaries++
        expect(found).toContainEqual([summary, { type: 'ephemeral' }])
      }
    }
    expect(summaries).toBeGreaterThan(0)
  })

  it('marks the newest prune mark in a tool loop that prunes, within four', async () => {
    const calls: any[] = []
    let step = 0
    const model = new MockLanguageModelV2({
      provider: 'anthropic.messages',
      modelId: 'claude-sonnet-4',
      doGenerate: async (options) => {
        calls.push(options)
        const i = step++
        if (i >= 14) return { content: [{ type: 'text', text: 'done' }], finishReason: 'stop', usage, warnings: [] }
        return { content: [{ type: 'tool-call', toolCallId: `call-${i}`, toolName: 'read', input: JSON.stringify({ step: i }) }], finishReason: 'tool-calls', usage, warnings: [] }
      },
    })
    const middleware = contextfoldMiddleware({
      contextWindow: 16_000,
      maxOutputTokens: 1_000,
      prune: true,
      compaction: { pruneProtect: 2_000, pruneMinimum: 0, pruneProtectSteps: 2 },
    })
    const read = ai.tool({ description: 'Reads.', inputSchema: z.object({ step: z.number() }), execute: async ({ step }) => `step ${step}:` + ' word'.repeat(900) })
    await ai.generateText({
      model: ai.wrapLanguageModel({ model, middleware }),
      tools: { read },
      stopWhen: ai.stepCountIs(15),
      messages: [{ role: 'system', content: 'be brief', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }, { role: 'user', content: 'audit the code' }],
    })
    let pruned = 0
    for (const { prompt } of calls) {
      const found = promptMarks(prompt)
      expect(found.length).toBeLessThanOrEqual(4)
      expect(found).toContainEqual([prompt.length - 1, { type: 'ephemeral' }])
      const cleared = prompt.findLastIndex((m: any) => m.role === 'tool' && JSON.stringify(m).includes('[Old tool result content cleared]'))
      if (cleared < 0) continue
      pruned++
      expect(found.map(([i]) => i)).toContain(cleared)
    }
    expect(pruned).toBeGreaterThan(0)
  })

  it('places none when turned off, none for other providers, and passes an OpenAI prompt cache key', async () => {
    const off: any[] = []
    await ai.generateText({
      model: ai.wrapLanguageModel({ model: mock('anthropic.messages', off), middleware: contextfoldMiddleware({ contextWindow: 16_000, cacheBreakpoints: false }) }),
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(promptMarks(off[0].prompt)).toEqual([])

    const openai: any[] = []
    const middleware = contextfoldMiddleware({ contextWindow: 16_000, promptCacheKey: (id) => `app-${id}` })
    const model = ai.wrapLanguageModel({ model: mock('openai.responses', openai), middleware })
    await ai.generateText({ model, messages: [{ role: 'user', content: 'hi' }], providerOptions: { contextfold: { conversationId: 'c42' } } })
    await ai.generateText({ model, messages: [{ role: 'user', content: 'hello' }], providerOptions: { openai: { promptCacheKey: 'mine' } } })
    expect(promptMarks(openai[0].prompt)).toEqual([])
    expect(openai[0].providerOptions.openai.promptCacheKey).toBe('app-c42')
    // The call's own key wins.
    expect(openai[1].providerOptions.openai.promptCacheKey).toBe('mine')

    // Off by default; the conversation's digest with `true`, the same on every call of it.
    const plain: any[] = []
    const base = { contextWindow: 16_000 }
    await ai.generateText({ model: ai.wrapLanguageModel({ model: mock('openai.chat', plain), middleware: contextfoldMiddleware(base) }), messages: [{ role: 'user', content: 'hi' }] })
    expect(plain[0].providerOptions?.openai?.promptCacheKey).toBeUndefined()
    const keyed: any[] = []
    const keyedModel = ai.wrapLanguageModel({ model: mock('openai.chat', keyed), middleware: contextfoldMiddleware({ ...base, promptCacheKey: true }) })
    const history: ai.ModelMessage[] = [{ role: 'user', content: 'hi' }]
    for (let i = 0; i < 2; i++) {
      const r = await ai.generateText({ model: keyedModel, messages: history })
      history.push(...r.response.messages, { role: 'user', content: 'more' })
    }
    const keys = keyed.map((c) => c.providerOptions.openai.promptCacheKey)
    expect(typeof keys[0]).toBe('string')
    expect(keys[1]).toBe(keys[0])
  })
})
