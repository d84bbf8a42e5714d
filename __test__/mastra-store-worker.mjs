// One server instance of a Mastra app whose agent has contextfoldProcessor with a session file
// store. Mastra's memory is the app's database: the parent holds the thread's rows and hands them
// to the instance with each turn ({ turn, rows }); the instance loads them into its InMemoryStore,
// runs the turn (a short tool loop) and answers with the thread's rows after it, what its model
// saw, and how many summaries and compactions it made so far.
// Usage: node mastra-store-worker.mjs <directory>
import { Agent } from '@mastra/core/agent'
import { InMemoryStore } from '@mastra/core/storage'
import { MastraLanguageModelV2Mock } from '@mastra/core/test-utils/llm-mock'
import { createTool } from '@mastra/core/tools'
import { Memory } from '@mastra/memory'
import { z } from 'zod'

import { contextfoldProcessor } from '../dist/mastra/index.js'
import { Session, extractiveSummarizer, fileStore } from '../dist/index.js'
import { SUMMARY_HEADER } from '../dist/prompt.js'

export const WINDOW = 32_000
const MAX_OUTPUT = 2_000
const SYSTEM = 'You are a careful coding agent.'
const STEPS = 3
const THREAD = 'chat-1'

let summaries = 0
let compactions = 0
const inner = extractiveSummarizer()
const processor = contextfoldProcessor({
  contextWindow: WINDOW,
  // opencode's prune numbers for 200k windows: no age prune in this window, so the turns compact.
  compaction: { pruneProtect: 40_000, pruneMinimum: 20_000 },
  store: fileStore(process.argv[2]),
  summarizer: async (req, signal) => (summaries++, inner(req, signal)),
  onCompaction: () => compactions++,
})

const read = createTool({ id: 'read', description: 'Reads a file.', inputSchema: z.object({ path: z.string() }), execute: async ({ path }) => `${path}:` + ' word'.repeat(4_000) })

/** Tokens of a prompt as the provider reads it (o200k, system prompt and tools included). */
function tokensOf(prompt, tools) {
  const s = Session.fromModelMessages(prompt.filter((m) => m.role !== 'system'), { model: { limit: { context: WINDOW, output: MAX_OUTPUT } }, tokenizer: 'o200k' })
  s.setOverhead({ system: prompt.filter((m) => m.role === 'system').map((m) => m.content), tools })
  return s.usage().tokens
}

/** A row as it came through JSON, with its dates back. */
const revive = (row) => ({ ...row, createdAt: new Date(row.createdAt) })

process.on('message', async ({ turn, text, rows }) => {
  try {
    const storage = new InMemoryStore()
    const memory = new Memory({ storage, options: { lastMessages: 1_000 } })
    await memory.createThread({ threadId: THREAD, resourceId: 'user-1' })
    if (rows.length) await memory.saveMessages({ messages: rows.map(revive) })
    const seen = []
    let step = 0
    const model = new MastraLanguageModelV2Mock({
      modelId: 'gpt-4o',
      doGenerate: async (options) => {
        const tokens = tokensOf(options.prompt, options.tools)
        const calls = new Set()
        const results = new Set()
        for (const m of options.prompt) {
          for (const p of Array.isArray(m.content) ? m.content : []) {
            if (p.type === 'tool-call') calls.add(p.toolCallId)
            if (p.type === 'tool-result') results.add(p.toolCallId)
          }
        }
        const text = JSON.stringify(options.prompt)
        seen.push({ tokens, unanswered: [...calls].filter((c) => !results.has(c)), summarized: text.includes(SUMMARY_HEADER), firstRequest: text.includes('turn 0:') })
        const usage = { inputTokens: tokens, outputTokens: 20, totalTokens: tokens + 20 }
        const i = step++
        if (i < STEPS) {
          const call = { type: 'tool-call', toolCallId: `t${turn}-${i}`, toolName: 'read', input: JSON.stringify({ path: `src/m${turn}-${i}.ts` }) }
          return { content: [call], finishReason: 'tool-calls', usage, warnings: [] }
        }
        return { content: [{ type: 'text', text: `turn ${turn} done` }], finishReason: 'stop', usage, warnings: [] }
      },
    })
    const agent = new Agent({ id: 'coder', name: 'coder', instructions: SYSTEM, model, tools: { read }, memory, inputProcessors: [processor] })
    const r = await agent.generate(text, { memory: { thread: THREAD, resource: 'user-1' }, maxSteps: STEPS + 2, modelSettings: { maxOutputTokens: MAX_OUTPUT } })
    const { messages } = await memory.recall({ threadId: THREAD, resourceId: 'user-1', perPage: false })
    process.send({ turn, text: r.text, rows: messages, seen, summaries, compactions })
  } catch (e) {
    process.send({ turn, error: `${e?.code ?? ''} ${e?.stack ?? e}` })
  }
})
process.send({ ready: true })
