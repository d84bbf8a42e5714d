// The AI SDK middleware with a session store: a conversation survives a restart (a new middleware
// on the same files sends the compacted prompt without summarizing again), and two processes
// serving alternate turns of one conversation summarize each compaction once and both send it,
// sharing a session file, a PostgreSQL or a Redis.
import { join } from 'node:path'

import * as ai from 'ai-v6'
import { MockLanguageModelV3 } from 'ai-v6/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'

import { contextfoldMiddleware } from '../dist/ai/index.js'
import { SessionFile, fileStore, type CompactionResult, type Message } from '../dist/index.js'
import { SUMMARY_HEADER } from '../dist/prompt.js'
import { BACKENDS, openStore, startBackend } from './backends.mjs'
import { MAX_OUTPUT, REQUEST, STEPS, SYSTEM, UNPRUNED, WINDOW, scriptedModel, tools, type Major, type Seen } from './ai-loop.js'
import { ask, countingSummarizer, scratch } from './scratch.js'

const major: Major = { name: 'ai v6', ai, Mock: MockLanguageModelV3, spec: 'v3', Agent: ai.ToolLoopAgent as never }
const { tempDir, worker } = scratch('cf-ai-store-')


/** Every message of the one session file in `dir`, hidden ones included. */
function stored(dir: string, id: string): Message[] {
  const store = SessionFile.open(join(dir, `${id}.jsonl`), { readOnly: true })
  try {
    return store.loadAll()
  } finally {
    store.close()
  }
}

describe('contextfoldMiddleware with a store', () => {
  it('a 35-step loop writes its compactions; after a restart the next call sends the compacted prompt without summarizing', async () => {
    const dir = tempDir()
    const seen: Seen = { prompts: [], problems: [], tokens: [] }
    const compactions: CompactionResult[] = []
    const first = countingSummarizer()
    const messages = [{ role: 'user' as const, content: REQUEST }]
    const model = ai.wrapLanguageModel({
      model: scriptedModel(major, seen),
      middleware: contextfoldMiddleware({
        contextWindow: WINDOW,
        compaction: UNPRUNED,
        store: fileStore(dir),
        conversationId: () => 'audit',
        summarizer: first.summarizer,
        onCompaction: ({ result }) => compactions.push(result),
      }),
    })
    const r = await major.ai.generateText({ model, system: SYSTEM, messages, tools: tools(major, z), maxOutputTokens: MAX_OUTPUT, stopWhen: ai.stepCountIs(STEPS + 5) })
    expect(seen.problems).toEqual([])
    expect(r.text).toBe('Audit done.')
    const done = compactions.filter((c) => c.status === 'compacted').length
    expect(done).toBeGreaterThanOrEqual(3)
    expect(first.calls()).toBe(compactions.length)
    // The file holds every message of the loop and every summary.
    const all = stored(dir, 'audit')
    expect(all.filter((m) => m.summary === true)).toHaveLength(done)
    expect(all.filter((m) => m.parts.some((p) => p.type === 'tool')).length).toBe(STEPS)

    // A restart: a new middleware over the same files, the app's whole history plus a new request.
    const after: Seen = { prompts: [], problems: [], tokens: [] }
    const second = countingSummarizer()
    const restarted = ai.wrapLanguageModel({
      model: scriptedModel(major, after),
      middleware: contextfoldMiddleware({ contextWindow: WINDOW, compaction: UNPRUNED, store: fileStore(dir), conversationId: () => 'audit', summarizer: second.summarizer }),
    })
    const history = [...messages, ...r.response.messages, { role: 'user' as const, content: 'Now write the report.' }]
    await major.ai.generateText({ model: restarted, system: SYSTEM, messages: history, tools: tools(major, z), maxOutputTokens: MAX_OUTPUT, stopWhen: ai.stepCountIs(1) })
    expect(second.calls()).toBe(0)
    const prompt = after.prompts[0]!
    expect(JSON.stringify(prompt)).toContain(SUMMARY_HEADER)
    expect(JSON.stringify(prompt.at(-1))).toContain('Now write the report.')
    expect(prompt.length).toBeLessThan(history.length)
    expect(after.tokens[0]).toBeLessThanOrEqual(WINDOW - MAX_OUTPUT)
    // Nothing written twice: the new request was appended once, after what was there.
    const again = stored(dir, 'audit')
    expect(again.length).toBe(all.length + 2) // the last answer of the loop, and the new request
    expect(new Set(again.map((m) => m.id)).size).toBe(again.length)
  })

  it("the README's fileStore('.sessions') works in a folder without it: the folder is created", async () => {
    const cwd = process.cwd()
    process.chdir(tempDir())
    try {
      const seen: Seen = { prompts: [], problems: [], tokens: [] }
      const model = ai.wrapLanguageModel({
        model: scriptedModel(major, seen),
        middleware: contextfoldMiddleware({ contextWindow: WINDOW, store: fileStore('.sessions') }),
      })
      await major.ai.generateText({ model, messages: [{ role: 'user', content: REQUEST }], providerOptions: { contextfold: { conversationId: 'chat-1' } } })
      expect(seen.prompts).toHaveLength(1)
      expect(stored('.sessions', 'chat-1').map((m) => m.role)).toEqual(['user']) // the answer is taken with the next call
    } finally {
      process.chdir(cwd)
    }
  })

  it('a conversation id that is not a file name is a coded error', () => {
    expect(() => fileStore(tempDir())('../escape')).toThrow(expect.objectContaining({ code: 'CF_INVALID_ARGUMENT' }))
  })
})

describe.each(BACKENDS)('contextfoldMiddleware with a shared %s store', (backend) => {
  let server: Awaited<ReturnType<typeof startBackend>>
  beforeAll(async () => {
    server = await startBackend(backend)
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('two processes serving alternate turns make each compaction once, and both send it', async () => {
    const args = [backend, server.target]
    const workers = await Promise.all([worker('ai-store-worker.mjs', args), worker('ai-store-worker.mjs', args)])
    type Seen = { tokens: number; messages: number; summarized: boolean }
    const history: unknown[] = []
    const calls: (Seen & { worker: number })[] = []
    const compactions = [0, 0]
    for (let turn = 0; turn < 10; turn++) {
      history.push({ role: 'user', content: `Turn ${turn}: read the next three modules.` })
      const w = turn % 2
      const answer = await ask(workers[w]!, { turn, messages: history })
      expect(answer.error).toBeUndefined()
      history.push(...answer.messages)
      calls.push(...(answer.seen as Seen[]).map((s) => ({ ...s, worker: w })))
      compactions[w] = answer.compactions
    }
    // Every prompt fit; once a summary exists, every call of either process sends it.
    expect(Math.max(...calls.map((c) => c.tokens))).toBeLessThanOrEqual(32_000 - 2_000)
    const firstSummarized = calls.findIndex((c) => c.summarized)
    expect(firstSummarized).toBeGreaterThan(0)
    expect(calls.slice(firstSummarized).every((c) => c.summarized)).toBe(true)
    expect(new Set(calls.slice(firstSummarized).map((c) => c.worker))).toEqual(new Set([0, 1]))
    // Each compaction was made once, by one of them (both did some): as many as summaries stored.
    const reader = await openStore(backend, server.target, 'chat-1', { readOnly: true })
    const all = await reader.loadAll()
    await reader.close()
    const recorded = all.filter((m) => m.summary === true).length
    expect(recorded).toBeGreaterThanOrEqual(3)
    expect(compactions.every((n) => n > 0)).toBe(true)
    expect(compactions[0]! + compactions[1]!).toBe(recorded)
    expect(new Set(all.map((m) => m.id)).size).toBe(all.length)
  })
})
