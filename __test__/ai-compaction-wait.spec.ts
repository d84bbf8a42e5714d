// A compaction due at the cost threshold waits for the model to read a large tool output, through
// the AI SDK middleware in a real generateText tool loop: the summary request (the agent's own
// conversation) comes after the call that sent the output, so its prefix, output included, is read
// from the cache. Under another policy too the model reads it before a summary takes it: an unread
// step that fits beside a summary is never summarized.
import * as ai from 'ai'
import { MockLanguageModelV2 } from 'ai/test'
import { describe, expect, it } from 'vitest'

import { aiSdkSummarizer, contextfoldMiddleware } from '../dist/ai/index.js'
import type { CompactionResult, PrunePolicy } from '../dist/index.js'
import { PrefixCache } from './fake-openai.js'
import { UNPRUNED } from './ai-loop.js'

const BIG = 'BIG-OUTPUT'
const isSummary = (prompt: unknown[]) => /being compacted/.test(JSON.stringify(prompt.at(-1)))

/** Lines of tool output per step: small steps, then one large output, then small steps again. */
const LINES = [...Array<number>(30).fill(12), 260, ...Array<number>(10).fill(12)]

async function loop(prune?: PrunePolicy) {
  const calls: Array<{ prompt: string; summary: boolean; cached: number; total: number }> = []
  const cache = new PrefixCache()
  const agent = new MockLanguageModelV2({
    modelId: 'agent-model',
    doGenerate: async ({ prompt, tools }) => {
      const { total, cached } = cache.read([tools, ...prompt])
      const summary = isSummary(prompt)
      calls.push({ prompt: JSON.stringify(prompt), summary, cached, total })
      const usage = { inputTokens: total, outputTokens: 20, totalTokens: total + 20, cachedInputTokens: cached }
      if (summary) return { content: [{ type: 'text', text: '## Goal\n- audit the billing module' }], finishReason: 'stop', usage, warnings: [] }
      return {
        content: [{ type: 'tool-call', toolCallId: `call_${calls.length}`, toolName: 'bash', input: JSON.stringify({ cmd: `cat part${calls.length}` }) }],
        finishReason: 'tool-calls',
        usage,
        warnings: [],
      }
    },
  })
  const compactions: CompactionResult[] = []
  let executed = 0
  const bash = ai.tool({
    description: 'Run a command',
    inputSchema: ai.jsonSchema<{ cmd: string }>({ type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] }),
    execute: async ({ cmd }) => {
      const lines = LINES[executed++] ?? 12
      const tag = lines > 100 ? BIG : 'small'
      return `${cmd}:\n${Array.from({ length: lines }, (_, i) => `${tag} line ${i} of the billing module, entry ${executed * 1000 + i}`).join('\n')}`
    },
  })
  const middleware = contextfoldMiddleware({
    contextWindow: 16_000,
    maxOutputTokens: 1_000,
    compaction: UNPRUNED,
    keep: 1_000,
    summarizer: aiSdkSummarizer(agent, { generateText: ai.generateText as never, maxRetries: 0 }),
    ...(prune ? { prune, compactAt: 'cost' as const } : {}),
    onCompaction: ({ result }) => compactions.push(result),
  })
  await ai.generateText({
    model: ai.wrapLanguageModel({ model: agent, middleware }),
    system: 'You are a careful coding agent.',
    prompt: 'Audit every module of the billing service.',
    tools: { bash },
    maxOutputTokens: 1_000,
    stopWhen: ai.stepCountIs(LINES.length),
  })
  return { calls, compactions }
}

describe('a compaction due at the cost threshold, through the AI SDK middleware', () => {
  it('waits until the model has read the large output that reached the threshold, then summarizes it from the cache', async () => {
    const { calls, compactions } = await loop()
    expect(compactions.filter((c) => c.status === 'compacted')).toHaveLength(1)
    const at = calls.findIndex((c) => c.summary)
    const read = calls.findIndex((c) => !c.summary && c.prompt.includes(BIG))
    // The model read the output (an agent call sent it) before the summary request.
    expect(read).toBeGreaterThan(0)
    expect(at).toBeGreaterThan(read)
    // The summary request reads the agent's previous call from the cache, output included.
    const previous = calls[at - 1]!
    expect(previous.prompt).toContain(BIG)
    expect(calls[at]!.cached).toBe(previous.total)
    // And the summary took it: no later call carries it.
    expect(calls.slice(at + 1).filter((c) => c.prompt.includes(BIG))).toEqual([])
  })

  it('under another policy the model reads it too before a summary takes it (it fits beside one)', async () => {
    const { calls } = await loop('tier')
    const read = calls.findIndex((c) => !c.summary && c.prompt.includes(BIG))
    const summarized = calls.findIndex((c) => c.summary && c.prompt.includes(BIG))
    expect(read).toBeGreaterThan(0)
    expect(calls[read]!.prompt).toContain(`${BIG} line 259 `)
    expect(summarized).toBeGreaterThan(read)
  })
})
