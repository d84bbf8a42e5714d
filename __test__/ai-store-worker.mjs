// One server instance of an AI SDK app (ai v6) whose model is wrapped with contextfoldMiddleware
// and a shared session store. The parent sends turns of one conversation ({ turn, messages }); the
// instance runs a short tool loop and answers with the response messages, what its model saw and
// how many compactions it has made.
// Usage: node ai-store-worker.mjs <backend: file | postgres | redis> <directory or server URL>
import * as ai from 'ai-v6'
import { MockLanguageModelV3 } from 'ai-v6/test'
import { z } from 'zod'

import { contextfoldMiddleware } from '../dist/ai/index.js'
import { Session, extractiveSummarizer } from '../dist/index.js'
import { SUMMARY_HEADER } from '../dist/prompt.js'
import { sessionsOf } from './backends.mjs'

export const WINDOW = 32_000
const MAX_OUTPUT = 2_000
const SYSTEM = 'You are a careful coding agent.'
const STEPS = 3

let compactions = 0
const middleware = contextfoldMiddleware({
  contextWindow: WINDOW,
  // opencode's prune numbers for 200k windows: no age prune in this window, so the turns compact.
  compaction: { pruneProtect: 40_000, pruneMinimum: 20_000 },
  store: sessionsOf(process.argv[2], process.argv[3]),
  summarizer: extractiveSummarizer(),
  onCompaction: ({ result }) => (compactions += result.status === 'compacted' ? 1 : 0),
})

const tools = {
  read: ai.tool({ description: 'Reads a file.', inputSchema: z.object({ path: z.string() }), execute: async ({ path }) => `${path}:` + ' word'.repeat(4_000) }),
}

/** Tokens of a prompt as the provider reads it (o200k, system prompt and tools included). */
function tokensOf(prompt, toolDefs) {
  const s = Session.fromModelMessages(prompt.filter((m) => m.role !== 'system'), { model: { limit: { context: WINDOW, output: MAX_OUTPUT } }, tokenizer: 'o200k' })
  s.setOverhead({ system: prompt.filter((m) => m.role === 'system').map((m) => m.content), tools: toolDefs })
  return s.usage().tokens
}

process.on('message', async ({ turn, messages }) => {
  try {
    const seen = []
    let step = 0
    const usage = (input) => ({ inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 20, text: 20, reasoning: 0 } })
    const model = new MockLanguageModelV3({
      provider: 'mock',
      modelId: 'gpt-4o',
      doGenerate: async (options) => {
        const tokens = tokensOf(options.prompt, options.tools)
        seen.push({ tokens, messages: options.prompt.length, summarized: JSON.stringify(options.prompt).includes(SUMMARY_HEADER) })
        const i = step++
        if (i < STEPS) {
          const call = { type: 'tool-call', toolCallId: `t${turn}-${i}`, toolName: 'read', input: JSON.stringify({ path: `src/m${turn}-${i}.ts` }) }
          return { content: [call], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(tokens), warnings: [] }
        }
        return { content: [{ type: 'text', text: `turn ${turn} done` }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(tokens), warnings: [] }
      },
    })
    const r = await ai.generateText({
      model: ai.wrapLanguageModel({ model, middleware }),
      system: SYSTEM,
      messages,
      tools,
      maxOutputTokens: MAX_OUTPUT,
      stopWhen: ai.stepCountIs(STEPS + 2),
      providerOptions: { contextfold: { conversationId: 'chat-1' } },
    })
    process.send({ turn, messages: r.response.messages, seen, compactions })
  } catch (e) {
    process.send({ turn, error: `${e?.code ?? ''} ${e?.stack ?? e}` })
  }
})
process.send({ ready: true })
