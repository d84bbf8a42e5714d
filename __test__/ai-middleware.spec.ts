// contextfoldMiddleware beyond one loop: an LLM summary through the same wrapped model passes the
// middleware untouched, conversations sharing one middleware stay apart, and a later request of a
// compacted conversation reuses its compaction instead of summarizing again.
import * as ai from 'ai'
import { MockLanguageModelV2 } from 'ai/test'
import { describe, expect, it } from 'vitest'

import { aiSdkSummarizer, contextfoldMiddleware } from '../dist/ai/index.js'
import type { CompactionResult } from '../dist/index.js'

// No usage report: the counts are contextfold's own.
const usage = { inputTokens: undefined, outputTokens: undefined, totalTokens: undefined }

/** A model that answers summary requests with a summary and anything else with a long text. */
function model(prompts: unknown[][]) {
  return new MockLanguageModelV2({
    modelId: 'gpt-4o',
    doGenerate: async ({ prompt }) => {
      prompts.push(prompt)
      const text = JSON.stringify(prompt).includes('<conversation>') ? '## Goal\n- keep going' : 'word '.repeat(3_000)
      return { content: [{ type: 'text', text }], finishReason: 'stop', usage, warnings: [] }
    },
  })
}

describe('contextfoldMiddleware', () => {
  it("summarizes through the wrapped model itself: the summary call passes the middleware untouched", async () => {
    const prompts: unknown[][] = []
    const compactions: CompactionResult[] = []
    let wrapped: ReturnType<typeof ai.wrapLanguageModel>
    const middleware = contextfoldMiddleware({
      contextWindow: 16_000,
      maxOutputTokens: 1_000,
      summarizer: aiSdkSummarizer({ specificationVersion: 'v2', provider: 'lazy', modelId: 'gpt-4o' }, {
        generateText: ((o: Record<string, unknown>) => ai.generateText({ ...o, model: wrapped } as never)) as never,
      }),
      onCompaction: ({ result }) => compactions.push(result),
    })
    wrapped = ai.wrapLanguageModel({ model: model(prompts), middleware })
    const messages: ai.ModelMessage[] = []
    for (let turn = 0; turn < 8; turn++) {
      messages.push({ role: 'user', content: `Question ${turn}: go on.` })
      const r = await ai.generateText({ model: wrapped, messages, maxOutputTokens: 1_000 })
      messages.push(...r.response.messages)
    }
    const summaryCalls = prompts.filter((p) => JSON.stringify(p).includes('<conversation>'))
    expect(compactions.filter((c) => c.status === 'compacted').length).toBeGreaterThanOrEqual(1)
    expect(summaryCalls.length).toBe(compactions.length)
    // The summary call reached the model as the summarizer sent it: its system prompt, then the transcript.
    for (const p of summaryCalls) expect((p[0] as { role: string }).role).toBe('system')
    // The agent's own calls after the first compaction carry the summary, not the whole history.
    const last = prompts.filter((p) => !JSON.stringify(p).includes('<conversation>')).at(-1)!
    expect(JSON.stringify(last)).toContain('context-summary')
    expect(JSON.stringify(last)).not.toContain('Question 0: go on.')
  })

  it("compacts before the window by default (the cheapest threshold), at overflow with compactAt: 1", async () => {
    const run = async (options: { compactAt?: number }) => {
      const sizes: number[] = []
      const wrapped = ai.wrapLanguageModel({
        model: model([]),
        middleware: contextfoldMiddleware({ contextWindow: 40_000, maxOutputTokens: 1_000, ...options, onCompaction: ({ result }) => sizes.push(result.tokensBefore) }),
      })
      const messages: ai.ModelMessage[] = []
      for (let turn = 0; turn < 14; turn++) {
        messages.push({ role: 'user', content: `Question ${turn}: go on.` })
        messages.push(...(await ai.generateText({ model: wrapped, messages, maxOutputTokens: 1_000 })).response.messages)
      }
      return sizes
    }
    const cheapest = await run({})
    const overflow = await run({ compactAt: 1 })
    expect(cheapest.length).toBeGreaterThan(0)
    expect(overflow.length).toBeGreaterThan(0)
    // usable = 39,000: the default compacts well before it, compactAt: 1 only once there.
    for (const t of cheapest) expect(t).toBeLessThan(39_000)
    for (const t of overflow) expect(t).toBeGreaterThanOrEqual(39_000)
  })

  it('keeps conversations apart and reuses a compaction when the app sends the whole history again', async () => {
    const prompts: unknown[][] = []
    const compactions: string[] = []
    const wrapped = ai.wrapLanguageModel({
      model: model(prompts),
      middleware: contextfoldMiddleware({ contextWindow: 16_000, maxOutputTokens: 1_000, onCompaction: ({ conversation }) => compactions.push(conversation) }),
    })
    const histories: Record<string, ai.ModelMessage[]> = { a: [], b: [] }
    for (let turn = 0; turn < 8; turn++) {
      for (const name of ['a', 'b']) {
        const h = histories[name]!
        h.push({ role: 'user', content: `${name} question ${turn}` })
        const r = await ai.generateText({ model: wrapped, messages: h, maxOutputTokens: 1_000 })
        h.push(...r.response.messages)
      }
    }
    const ids = new Set(compactions)
    expect(ids.size).toBe(2)
    // Each conversation compacted a few times, never once per call.
    expect(compactions.length).toBeLessThan(16)
    // No prompt mixed the two conversations.
    for (const p of prompts) {
      const text = JSON.stringify(p)
      expect(text.includes('a question') && text.includes('b question')).toBe(false)
    }
  })
})
