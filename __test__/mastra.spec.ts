// contextfoldProcessor in a real Mastra agent: `Agent` with `Memory` on `InMemoryStore` and the
// `MastraLanguageModelV2Mock` of `@mastra/core/test-utils/llm-mock` playing the loop of ai-loop.ts
// (35 tool steps, 150k+ tokens of tool output, a 32k window). Every prompt the model receives
// fits (system prompt and tools counted), no tool call lacks its result, the request stays
// verbatim, the summarizer is called once per compaction, and memory still holds every message.
// Beside it, Mastra's own `TokenLimiter` in the same loop, and a conversation whose turns are
// served by two processes sharing a session file.
import { fork, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'

import { Agent } from '@mastra/core/agent'
import { TokenLimiter } from '@mastra/core/processors'
import { InMemoryStore } from '@mastra/core/storage'
import { MastraLanguageModelV2Mock, simulateReadableStream } from '@mastra/core/test-utils/llm-mock'
import { createTool } from '@mastra/core/tools'
import { Memory } from '@mastra/memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'

import { contextfoldProcessor, mastraSummarizer } from '../dist/mastra/index.js'
import { extractiveSummarizer, type CompactionResult } from '../dist/index.js'
import { SUMMARY_HEADER } from '../dist/prompt.js'
import { MAX_OUTPUT, REQUEST, STEPS, SYSTEM, TOOLS, WINDOW, scriptedModel, toolOutput, type Major, type Seen } from './ai-loop.js'
import { countingSummarizer, scratch } from './scratch.js'

const mastra: Major = { name: 'mastra', ai: { simulateReadableStream }, Mock: MastraLanguageModelV2Mock, spec: 'v2', Agent: Agent as never }

const { tempDir, children } = scratch('cf-mastra-store-')


const tools = Object.fromEntries(
  TOOLS.map((name) => [
    name,
    createTool({ id: name, description: `The ${name} tool.`, inputSchema: z.object({ step: z.number() }), execute: async ({ step }: { step: number }) => toolOutput(step) }),
  ]),
)

/** The thread as memory stores it: each tool call's result (by call id) and the roles. */
async function recalled(memory: Memory, threadId: string) {
  const { messages } = await memory.recall({ threadId, resourceId: 'user-1', perPage: false })
  const results = new Map<string, unknown>()
  for (const m of messages) {
    for (const p of m.content.parts) {
      if (p.type === 'tool-invocation' && p.toolInvocation.state === 'result') results.set(p.toolInvocation.toolCallId, p.toolInvocation.result)
    }
  }
  return { messages, results }
}

/** Steps of the loop a prompt still tells of: their call (`"step":i`) or their output. */
function mentioned(prompt: unknown[]): number {
  const text = JSON.stringify(prompt)
  let n = 0
  for (let i = 0; i < STEPS; i++) if (text.includes(`\\"step\\":${i}}`) || text.includes(`"step":${i}}`) || text.includes(`output of step ${i}:`)) n++
  return n
}

/** The loop of ai-loop.ts as a Mastra agent with memory and the given input processors. */
async function runLoop(inputProcessors: unknown[]) {
  const seen: Seen = { prompts: [], problems: [], tokens: [] }
  const memory = new Memory({ storage: new InMemoryStore(), options: { lastMessages: 1_000 } })
  const agent = new Agent({
    id: 'auditor',
    name: 'auditor',
    instructions: SYSTEM,
    model: scriptedModel(mastra, seen),
    tools,
    memory,
    inputProcessors: inputProcessors as never,
  })
  const r = await agent.generate(REQUEST, {
    memory: { thread: 'audit', resource: 'user-1' },
    maxSteps: STEPS + 5,
    modelSettings: { maxOutputTokens: MAX_OUTPUT },
  })
  return { seen, memory, r }
}

describe('contextfoldProcessor in a Mastra Agent', () => {
  it('a 35-step loop with 150k+ tokens of tool output fits a 32k window; memory keeps every message', async () => {
    const compactions: CompactionResult[] = []
    const { summarizer, calls } = countingSummarizer()
    const processor = contextfoldProcessor({ contextWindow: WINDOW, summarizer, onCompaction: ({ result }) => compactions.push(result) })
    const { seen, memory, r } = await runLoop([processor])
    expect(seen.problems).toEqual([])
    expect(r.text).toBe('Audit done.')
    expect(seen.prompts).toHaveLength(STEPS + 1)
    const total = Array.from({ length: STEPS }, (_, i) => toolOutput(i).length / 5).reduce((a, b) => a + b, 0)
    expect(total).toBeGreaterThan(150_000)
    const done = compactions.filter((c) => c.status === 'compacted').length
    expect(done).toBeGreaterThanOrEqual(3)
    // Once per compaction, never per call.
    expect(calls()).toBe(compactions.length)
    expect(calls()).toBeLessThan(seen.prompts.length / 5)
    expect(seen.prompts.filter((p) => JSON.stringify(p).includes(SUMMARY_HEADER)).length).toBeGreaterThan(STEPS / 2)
    // The tools were counted: the provider got them with every call.
    expect(Math.max(...seen.tokens)).toBeLessThanOrEqual(WINDOW - MAX_OUTPUT)
    // Memory holds every step's full output and no summary.
    const stored = await recalled(memory, 'audit')
    expect(stored.results.size).toBe(STEPS)
    for (let i = 0; i < STEPS; i++) expect(stored.results.get(`call-${i}`)).toBe(toolOutput(i))
    expect(JSON.stringify(stored.messages)).not.toContain(SUMMARY_HEADER)
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
  })

  it('the next turn, rebuilt from memory, gets the compacted prompt without summarizing again', async () => {
    const { summarizer, calls } = countingSummarizer()
    const processor = contextfoldProcessor({ contextWindow: WINDOW, summarizer })
    const { memory } = await runLoop([processor])
    const before = calls()
    const seen: Seen = { prompts: [], problems: [], tokens: [] }
    const model = new MastraLanguageModelV2Mock({
      doGenerate: async (options) => {
        seen.prompts.push(options.prompt)
        return { content: [{ type: 'text', text: 'Report written.' }], finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, warnings: [] }
      },
    })
    const agent = new Agent({ id: 'auditor', name: 'auditor', instructions: SYSTEM, model, tools, memory, inputProcessors: [processor] })
    await agent.generate('Now write the report.', { memory: { thread: 'audit', resource: 'user-1' }, maxSteps: 1 })
    expect(calls()).toBe(before)
    const prompt = JSON.stringify(seen.prompts[0])
    expect(prompt).toContain(SUMMARY_HEADER)
    expect(prompt).toContain(REQUEST)
    expect(prompt).toContain('Now write the report.')
    expect(prompt.length).toBeLessThan(4 * WINDOW)
  })

  it("works with a model-router id: the window comes from the catalog ('openai/gpt-4o': 128k)", async () => {
    const seen: unknown[][] = []
    const windows: number[] = []
    const processor = contextfoldProcessor({ summarizer: extractiveSummarizer(), shouldCompact: ({ contextWindow }) => (windows.push(contextWindow), false) })
    // The router model's prompt is answered by a processor after contextfold: no network.
    const answer = {
      id: 'answer',
      processLLMRequest({ prompt }: { prompt: unknown[] }) {
        seen.push(prompt)
        return { response: { chunks: [{ type: 'text-delta', payload: { id: 't', text: 'ok' } }, { type: 'finish', payload: { stepResult: { reason: 'stop' }, output: { usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } }, metadata: {} } }] } }
      },
    }
    process.env.OPENAI_API_KEY ??= 'sk-test'
    const memory = new Memory({ storage: new InMemoryStore(), options: { lastMessages: 1_000 } })
    const agent = new Agent({ id: 'a', name: 'a', instructions: SYSTEM, model: 'openai/gpt-4o', memory, inputProcessors: [processor, answer as never] })
    const big = 'word '.repeat(60_000) // 60k tokens: fits 128k, not 32k
    const r = await agent.generate(`${REQUEST}\n${big}`, { memory: { thread: 'router', resource: 'user-1' }, maxSteps: 1 })
    expect(seen).toHaveLength(1)
    expect(windows).toEqual([128_000])
    expect(JSON.stringify(seen[0])).not.toContain(SUMMARY_HEADER)
    expect(r.text).toBe('ok')
  })
})

describe("Mastra's TokenLimiter in the same loop (what contextfold does differently, measured)", () => {
  it('drops the oldest history without a trace, counts an estimate without the tools, and some prompts overflow', async () => {
    const { seen, memory, r } = await runLoop([new TokenLimiter(WINDOW - MAX_OUTPUT)])
    expect(r.text).toBe('Audit done.')
    expect(seen.prompts).toHaveLength(STEPS + 1)
    // Tool pairs stay together and the request is kept (both hold here)...
    expect(seen.problems.filter((p) => !p.endsWith('do not fit'))).toEqual([])
    // ...but its tokenx estimate of the prompt, without the tool definitions, lets prompts past the
    // usable window (docs/guides/mastra.md cites these figures: 7 of 36, up to 28,171 tokens).
    const over = seen.tokens.filter((t) => t > WINDOW - MAX_OUTPUT)
    expect(over.length).toBeGreaterThan(0)
    // What it drops leaves nothing behind: no summary, the first steps are gone from the last prompt.
    const last = JSON.stringify(seen.prompts.at(-1))
    expect(seen.prompts.some((p) => JSON.stringify(p).includes(SUMMARY_HEADER))).toBe(false)
    expect(last).not.toContain('call-0"')
    expect(mentioned(seen.prompts.at(-1)!)).toBeLessThan(STEPS / 4)
    // It trims the prompt only: memory keeps every step, as with contextfold.
    expect((await recalled(memory, 'audit')).results.size).toBe(STEPS)
  })
})

describe('contextfoldProcessor across processes', () => {
  it('two processes serving alternate turns of a thread share one session file: each compaction is summarized by one process and sent by both', async () => {
    const dir = tempDir()
    const start = () =>
      new Promise<ChildProcess>((resolve, reject) => {
        const c = fork(join(import.meta.dirname, 'mastra-store-worker.mjs'), [dir], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
        children.push(c)
        c.once('message', () => resolve(c))
        c.once('error', reject)
      })
    const [a, b] = await Promise.all([start(), start()])
    const ask = (c: ChildProcess, msg: unknown) =>
      new Promise<any>((resolve) => {
        c.once('message', resolve)
        c.send(msg as never)
      })
    let rows: unknown[] = []
    const turns: any[] = []
    for (let turn = 0; turn < 8; turn++) {
      const r = await ask(turn % 2 ? b : a, { turn, text: `turn ${turn}: ${turn === 0 ? REQUEST : 'read three more files'}`, rows })
      expect(r.error).toBeUndefined()
      expect(r.text).toBe(`turn ${turn} done`)
      turns.push(r)
      rows = r.rows
    }
    const seen = turns.flatMap((t) => t.seen)
    // 8 turns of 3 outputs of 4k tokens: 96k tokens through a 32k window.
    expect(seen).toHaveLength(8 * 4)
    for (const s of seen) {
      expect(s.tokens).toBeLessThanOrEqual(WINDOW - 2_000)
      expect(s.unanswered).toEqual([])
      expect(s.firstRequest).toBe(true)
    }
    // Once per compaction, never per call (the counts are cumulative per process): summaries are
    // written only in turns that compacted, one per compaction, or two when the cut falls inside a
    // turn (the history and the turn's start are summarized apart).
    const compactions = turns[6].compactions + turns[7].compactions
    const summaries = turns[6].summaries + turns[7].summaries
    expect(compactions).toBeGreaterThanOrEqual(2)
    expect(summaries).toBeGreaterThanOrEqual(compactions)
    expect(summaries).toBeLessThanOrEqual(2 * compactions)
    for (let i = 2; i < turns.length; i++) {
      if (turns[i].compactions === turns[i - 2].compactions) expect(turns[i].summaries).toBe(turns[i - 2].summaries)
    }
    // A turn that starts where the other process compacted sends that summary without writing one.
    const inherited = turns.filter((t, i) => i > 1 && turns[i - 1].seen.at(-1).summarized && t.seen[0].summarized && t.summaries === turns[i - 2].summaries)
    expect(inherited.length).toBeGreaterThanOrEqual(3)
    // The thread in memory holds every turn: 8 requests, 24 tool results, no summary.
    const stored = rows as any[]
    expect(stored.filter((m) => m.role === 'user')).toHaveLength(8)
    const results = stored.flatMap((m) => m.content.parts.filter((p: any) => p.type === 'tool-invocation' && p.toolInvocation.state === 'result'))
    expect(results).toHaveLength(24)
    expect(JSON.stringify(stored)).not.toContain(SUMMARY_HEADER)
  })
})
