// contextfold/langchain in a real LangChain.js v1 agent (`createAgent`, `fakeModel()`, MemorySaver):
// a 35-step loop with 150k+ tokens of tool output in a 32k window, the same loop under LangChain's
// own `summarizationMiddleware`, the opt-in checkpoint shrink, and a conversation served by two
// processes sharing a file store.
import { join } from 'node:path'

import { AIMessage, HumanMessage, mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages, type BaseMessage, type ToolMessage } from '@langchain/core/messages'
import { fakeModel } from '@langchain/core/testing'
import { MemorySaver } from '@langchain/langgraph'
import { createAgent, summarizationMiddleware } from 'langchain'
import { describe, expect, it } from 'vitest'

import { contextfoldLangChain, langchainSummarizer } from '../dist/langchain/index.js'
import { SessionFile, fileStore, type CompactionResult } from '../dist/index.js'
import { SUMMARY_HEADER } from '../dist/prompt.js'
import { MAX_OUTPUT, REQUEST, STEPS, SYSTEM, UNPRUNED, WINDOW, loopModel, loopTools, toolOutput, type LoopSeen } from './langchain-loop.js'
import { ask, countingSummarizer, scratch } from './scratch.js'

const { tempDir, worker } = scratch('cf-langchain-')


/** The messages the agent's checkpoint holds for `thread`. */
async function saved(agent: unknown, thread: string): Promise<BaseMessage[]> {
  const state = await (agent as { getState(config: unknown): Promise<{ values: { messages: BaseMessage[] } }> }).getState(config(thread))
  return state.values.messages
}

const seenOf = (): LoopSeen => ({ prompts: [], problems: [], tokens: [] })
const config = (thread: string) => ({ configurable: { thread_id: thread }, recursionLimit: 4 * STEPS })

/** The loop's messages as the checkpoint must hold them: the request, 35 answers with their whole outputs, the final answer. */
function expectWhole(messages: BaseMessage[]): void {
  expect(messages).toHaveLength(2 + 2 * STEPS)
  expect(messages[0]!.content).toBe(REQUEST)
  for (let i = 0; i < STEPS; i++) {
    const answer = messages[1 + 2 * i] as AIMessage
    expect(answer.tool_calls?.[0]?.id).toBe(`call-${i}`)
    expect((answer.content as any[])[0]).toEqual({ type: 'thinking', thinking: expect.any(String), signature: `sig-${i}` })
    expect((messages[2 + 2 * i] as ToolMessage).content).toBe(toolOutput(i))
  }
}

describe('contextfoldLangChain in createAgent', () => {
  it('a 35-step loop over 150k tokens of tool output fits a 32k window on every call; the checkpoint keeps every message', async () => {
    const seen = seenOf()
    const compactions: CompactionResult[] = []
    const counted = countingSummarizer()
    const checkpointer = new MemorySaver()
    const agent = createAgent({
      model: loopModel(seen),
      tools: loopTools,
      systemPrompt: SYSTEM,
      checkpointer,
      middleware: [
        contextfoldLangChain({
          contextWindow: WINDOW,
          maxOutputTokens: MAX_OUTPUT,
          tokenizer: 'o200k',
          compaction: UNPRUNED,
          summarizer: counted.summarizer,
          onCompaction: ({ result }) => compactions.push(result),
        }),
      ],
    })
    const total = Array.from({ length: STEPS }, (_, i) => toolOutput(i).length / 5).reduce((a, b) => a + b, 0)
    expect(total).toBeGreaterThan(150_000)
    const r = await agent.invoke({ messages: [new HumanMessage(REQUEST)] }, config('audit'))
    expect(seen.problems).toEqual([])
    expect(seen.prompts).toHaveLength(STEPS + 1)
    expect(r.messages.at(-1)!.content).toBe('Audit done.')
    const done = compactions.filter((c) => c.status === 'compacted').length
    expect(done).toBeGreaterThanOrEqual(3)
    // Once per compaction, not per model call.
    expect(counted.calls()).toBe(compactions.length)
    console.log('contextfoldLangChain, 35-step loop, 32k window:', JSON.stringify({ calls: seen.prompts.length, over: 0, maxTokens: Math.max(...seen.tokens), compactions: done, summaries: counted.calls(), checkpointMessages: r.messages.length }))
    expect(seen.prompts.filter((p) => JSON.stringify(p.map((m) => m.content)).includes(SUMMARY_HEADER)).length).toBeGreaterThan(STEPS / 2)
    // The state and the checkpoint hold every original message, whole.
    expectWhole(r.messages)
    expectWhole(await saved(agent, 'audit'))
    // The newest answer of every prompt is the agent's own object: its thinking block and signature as they came.
    const state = r.messages
    for (const prompt of seen.prompts.slice(1)) {
      const newest = prompt.filter((m) => m.type === 'ai').at(-1)!
      expect(state).toContain(newest)
    }
    // The unknown block of the first answer stayed in place while that answer was sent.
    const first = seen.prompts[1]!.find((m) => m.id === state[1]!.id) as AIMessage
    expect((first.content as any[])[1]).toEqual({ type: 'x-provider-note', note: 'kept as it came' })
  })

  it('a pruned output reaches the model as a ToolMessage of its own (same id and call); the state keeps it whole', async () => {
    const seen = seenOf()
    const agent = createAgent({
      model: loopModel(seen, 22),
      tools: loopTools,
      systemPrompt: SYSTEM,
      middleware: [
        contextfoldLangChain({ contextWindow: WINDOW, maxOutputTokens: MAX_OUTPUT, tokenizer: 'o200k', compaction: { pruneProtect: 3_000, pruneMinimum: 0, pruneProtectSteps: 3 } }),
      ],
    })
    const r = await agent.invoke({ messages: [new HumanMessage(REQUEST)] }, config('prune'))
    expect(seen.problems).toEqual([])
    const state = r.messages as BaseMessage[]
    const pruned = seen.prompts.flatMap((p) => p.filter((m) => m.type === 'tool' && !state.includes(m))) as ToolMessage[]
    expect(pruned.length).toBeGreaterThan(0)
    for (const m of pruned) {
      const own = state.find((o) => o.id === m.id) as ToolMessage
      expect(own.tool_call_id).toBe(m.tool_call_id)
      expect(own.content).toBe(toolOutput(Number(own.tool_call_id.slice(5))))
      expect(String(m.content).length).toBeLessThan(String(own.content).length)
    }
  })

  it("the model's profile.maxInputTokens wins over contextWindow", async () => {
    const seen = seenOf()
    const compactions: CompactionResult[] = []
    const model = loopModel(seen, 6)
    Object.defineProperty(model, 'profile', { value: { maxInputTokens: 16_000 } })
    const agent = createAgent({
      model,
      tools: loopTools,
      systemPrompt: SYSTEM,
      middleware: [contextfoldLangChain({ contextWindow: 1_000_000, maxOutputTokens: MAX_OUTPUT, tokenizer: 'o200k', onCompaction: ({ result }) => compactions.push(result) })],
    })
    await agent.invoke({ messages: [new HumanMessage(REQUEST)] }, config('profile'))
    expect(compactions.some((c) => c.status === 'compacted')).toBe(true)
    expect(Math.max(...seen.tokens)).toBeLessThanOrEqual(16_000 - MAX_OUTPUT)
  })

  it("checkpoint: 'compact' shrinks the checkpoint after a summary the summarizer wrote, and never after a failed one", async () => {
    const run = async (summarizer: NonNullable<Parameters<typeof contextfoldLangChain>[0]>['summarizer']) => {
      const seen = seenOf()
      const compactions: CompactionResult[] = []
      const conversations = new Set<string>()
      const agent = createAgent({
        model: loopModel(seen, 12),
        tools: loopTools,
        systemPrompt: SYSTEM,
        checkpointer: new MemorySaver(),
        middleware: [
          contextfoldLangChain({ contextWindow: WINDOW, maxOutputTokens: MAX_OUTPUT, tokenizer: 'o200k', compaction: UNPRUNED, checkpoint: 'compact', summarizer, onCompaction: ({ result, conversation }) => (conversations.add(conversation), compactions.push(result)) }),
        ],
      })
      const r = await agent.invoke({ messages: [new HumanMessage(REQUEST)] }, config('shrink'))
      return { seen, compactions, conversations, messages: r.messages as BaseMessage[], saved: await saved(agent, 'shrink') }
    }
    // A summary written by a LangChain chat model.
    const writer = fakeModel()
    for (let i = 0; i < 10; i++) writer.respond(new AIMessage(`## Goal\n- ${REQUEST}\n\n## Progress\n- read the modules so far (summary ${i})`))
    const ok = await run(langchainSummarizer(writer))
    expect(ok.seen.problems).toEqual([])
    const compacted = ok.compactions.filter((c) => c.status === 'compacted' && !c.fallback)
    expect(compacted.length).toBeGreaterThanOrEqual(2)
    // The shrunk checkpoint continues the same conversation: its summary is recognized, not taken as new history.
    expect(ok.conversations.size).toBe(1)
    expect(writer.callCount).toBe(ok.compactions.length)
    expect(ok.saved.length).toBeLessThan(2 + 2 * 12)
    expect(JSON.stringify(ok.saved[1]!.content)).toContain('summary')
    // The kept tail is whole in the checkpoint (pruning is per call) and its calls have their results.
    const results = new Set(ok.saved.filter((m) => m.type === 'tool').map((m) => (m as ToolMessage).tool_call_id))
    for (const m of ok.saved) for (const c of (m as AIMessage).tool_calls ?? []) expect(results.has(c.id!)).toBe(true)
    for (const m of ok.saved.filter((m) => m.type === 'tool')) expect((m as ToolMessage).content).toBe(toolOutput(Number((m as ToolMessage).tool_call_id.slice(5))))
    // A summarizer whose answers are rejected (an error finish): the fallback summary serves the calls, the checkpoint keeps everything.
    const failing = await run(async () => ({ text: 'partial', finishReason: 'error' }))
    expect(failing.seen.problems).toEqual([])
    expect(failing.compactions.some((c) => c.status === 'compacted' && c.fallback)).toBe(true)
    expect(failing.saved).toHaveLength(2 + 2 * 12)
  })
})

describe("LangChain's summarizationMiddleware in the same loop", () => {
  it('measured: prompts over the window, summarizer calls, what the checkpoint keeps', async () => {
    const rows: Record<string, unknown>[] = []
    for (const keep of [{ messages: 20 }, { tokens: 8_000 }] as const) {
      const seen = seenOf()
      const writer = fakeModel()
      let summaries = 0
      for (let i = 0; i < 4 * STEPS; i++) writer.respond(() => (summaries++, new AIMessage(`Summary ${i}: the user asked: ${REQUEST}`)))
      const agent = createAgent({
        model: loopModel(seen),
        tools: loopTools,
        systemPrompt: SYSTEM,
        checkpointer: new MemorySaver(),
        middleware: [summarizationMiddleware({ model: writer, trigger: { tokens: WINDOW - MAX_OUTPUT }, keep })],
      })
      await agent.invoke({ messages: [new HumanMessage(REQUEST)] }, config('builtin'))
      const kept = await saved(agent, 'builtin')
      const over = seen.tokens.filter((t) => t > WINDOW - MAX_OUTPUT).length
      rows.push({ keep: JSON.stringify(keep), calls: seen.prompts.length, over, maxTokens: Math.max(...seen.tokens), summaries, checkpointMessages: kept.length, unpaired: seen.problems.filter((p) => p.includes('without its result')).length, requestLost: seen.problems.filter((p) => p.includes('verbatim')).length,
        // The built-in trims what it summarizes to its newest 4,000 tokens; a span of larger messages leaves nothing, and this placeholder replaces the history.
        placeholder: seen.prompts.filter((p) => JSON.stringify(p.map((m) => m.content)).includes('Previous conversation was too long to summarize.')).length })
      // The built-in rewrites the checkpoint: the originals are gone from it.
      expect(kept.length).toBeLessThan(2 + 2 * STEPS)
      expect(summaries).toBeGreaterThan(0)
    }
    console.log('summarizationMiddleware, 35-step loop, 32k window:', JSON.stringify(rows))
  })
})

describe('contextfoldLangChain with a file store', () => {
  it('two processes serving alternate turns of one thread summarize each compaction once, and both send it', async () => {
    const dir = tempDir()
    const workers = await Promise.all([worker('langchain-store-worker.mjs', [dir]), worker('langchain-store-worker.mjs', [dir])])
    type Seen = { tokens: number; summarized: boolean }
    let history: BaseMessage[] = []
    const calls: (Seen & { worker: number })[] = []
    const compactions = [0, 0]
    const summarized = [0, 0]
    for (let turn = 0; turn < 10; turn++) {
      history.push(new HumanMessage({ content: `Turn ${turn}: read the next three modules.`, id: `turn-${turn}` }))
      const w = turn % 2
      const answer = await ask(workers[w]!, { turn, messages: mapChatMessagesToStoredMessages(history) })
      expect(answer.error).toBeUndefined()
      const after = mapStoredMessagesToChatMessages(answer.messages)
      // The thread's history is the agent's whole state: nothing of it was rewritten.
      expect(after.slice(0, history.length).map((m) => m.id)).toEqual(history.map((m) => m.id))
      expect(after.length).toBe(history.length + 7)
      history = after
      calls.push(...(answer.seen as Seen[]).map((s) => ({ ...s, worker: w })))
      compactions[w] = answer.compactions
      summarized[w] = answer.summaries
    }
    expect(Math.max(...calls.map((c) => c.tokens))).toBeLessThanOrEqual(32_000 - 2_000)
    const firstSummarized = calls.findIndex((c) => c.summarized)
    expect(firstSummarized).toBeGreaterThan(0)
    expect(calls.slice(firstSummarized).every((c) => c.summarized)).toBe(true)
    expect(new Set(calls.slice(firstSummarized).map((c) => c.worker))).toEqual(new Set([0, 1]))
    // Each compaction made once, by one of them: as many as the summaries stored, and the summarizer called once for each.
    const store = SessionFile.open(join(dir, 'chat-1.jsonl'), { readOnly: true })
    const all = store.loadAll()
    store.close()
    const recorded = all.filter((m) => m.summary === true).length
    expect(recorded).toBeGreaterThanOrEqual(3)
    expect(compactions.every((n) => n > 0)).toBe(true)
    expect(compactions[0]! + compactions[1]!).toBe(recorded)
    expect(summarized).toEqual(compactions)
    expect(new Set(all.map((m) => m.id)).size).toBe(all.length)
  })

  it('a thread resumed by a new middleware on the same files sends the compacted prompt without summarizing', async () => {
    const dir = tempDir()
    const seen = seenOf()
    const first = countingSummarizer()
    const make = (s: LoopSeen, summarizer: ReturnType<typeof countingSummarizer>['summarizer'], steps: number) =>
      createAgent({
        model: loopModel(s, steps),
        tools: loopTools,
        systemPrompt: SYSTEM,
        middleware: [contextfoldLangChain({ contextWindow: WINDOW, maxOutputTokens: MAX_OUTPUT, tokenizer: 'o200k', compaction: UNPRUNED, store: fileStore(dir), summarizer })],
      })
    const r = await make(seen, first.summarizer, 12).invoke({ messages: [new HumanMessage(REQUEST)] }, config('resume'))
    expect(seen.problems).toEqual([])
    expect(first.calls()).toBeGreaterThan(0)
    const after = seenOf()
    const second = countingSummarizer()
    const history = [...r.messages, new HumanMessage('Now write the report.')]
    await make(after, second.summarizer, 0).invoke({ messages: history }, config('resume'))
    expect(second.calls()).toBe(0)
    expect(after.problems).toEqual([])
    const prompt = after.prompts[0]!
    expect(JSON.stringify(prompt.map((m) => m.content))).toContain(SUMMARY_HEADER)
    expect(prompt.at(-1)!.content).toBe('Now write the report.')
    expect(prompt.length).toBeLessThan(history.length)
  })
})
