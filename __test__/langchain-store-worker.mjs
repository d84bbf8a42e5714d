// One server instance of a LangChain.js agent (`createAgent` with contextfoldLangChain on a shared
// session directory). The parent sends turns of one thread ({ turn, messages }, stored messages);
// the instance runs a short tool loop and answers with the thread's messages, what its model saw,
// how many compactions it made and how many summaries of the history it asked for.
// Usage: node langchain-store-worker.mjs <directory>
import { AIMessage, mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages } from '@langchain/core/messages'
import { fakeModel } from '@langchain/core/testing'
import { convertToOpenAITool } from '@langchain/core/utils/function_calling'
import { createAgent, tool } from 'langchain'
import { z } from 'zod'

import { contextfoldLangChain } from '../dist/langchain/index.js'
import { Session, extractiveSummarizer, fileStore } from '../dist/index.js'
import { SUMMARY_HEADER } from '../dist/prompt.js'

const WINDOW = 32_000
const MAX_OUTPUT = 2_000
const SYSTEM = 'You are a careful coding agent.'
const STEPS = 3

let compactions = 0
let summaries = 0
const inner = extractiveSummarizer()
const read = tool(async ({ path }) => `${path}:` + ' word'.repeat(4_000), { name: 'read', description: 'Reads a file.', schema: z.object({ path: z.string() }) })
const definitions = [convertToOpenAITool(read)]
const middleware = contextfoldLangChain({
  contextWindow: WINDOW,
  maxOutputTokens: MAX_OUTPUT,
  tokenizer: 'o200k',
  // opencode's prune numbers for 200k windows: no age prune in this window, so the turns compact.
  compaction: { pruneProtect: 40_000, pruneMinimum: 20_000 },
  store: fileStore(process.argv[2]),
  // Summary requests (a split turn's beginning gets one of its own, in parallel).
  summarizer: (req, signal) => (req.kind === 'turn-prefix' || summaries++, inner(req, signal)),
  onCompaction: ({ result }) => (compactions += result.status === 'compacted' ? 1 : 0),
})

const text = (c) => (typeof c === 'string' ? c : c.map((b) => (b.type === 'text' ? b.text : '')).join(''))

/** Tokens of a prompt as the provider reads it (o200k, system prompt and tools included). */
function tokensOf(prompt) {
  const messages = []
  for (const m of prompt) {
    if (m.type === 'human') messages.push({ role: 'user', content: text(m.content) })
    else if (m.type === 'ai') messages.push({ role: 'assistant', content: [...(text(m.content) ? [{ type: 'text', text: text(m.content) }] : []), ...(m.tool_calls ?? []).map((c) => ({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: c.args }))] })
    else if (m.type === 'tool') messages.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: m.tool_call_id, toolName: m.name, output: { type: 'text', value: text(m.content) } }] })
  }
  const s = Session.fromModelMessages(messages, { model: { limit: { context: WINDOW, output: MAX_OUTPUT } }, tokenizer: 'o200k' })
  s.setOverhead({ system: prompt.filter((m) => m.type === 'system').map((m) => text(m.content)), tools: definitions })
  return s.usage().tokens
}

process.on('message', async ({ turn, messages }) => {
  try {
    const seen = []
    const model = fakeModel()
    for (let i = 0; i <= STEPS; i++) {
      model.respond((prompt) => {
        const tokens = tokensOf(prompt)
        seen.push({ tokens, summarized: JSON.stringify(prompt.map((m) => m.content)).includes(SUMMARY_HEADER) })
        const usage_metadata = { input_tokens: tokens, output_tokens: 20, total_tokens: tokens + 20 }
        if (i === STEPS) return new AIMessage({ content: `turn ${turn} done`, usage_metadata })
        return new AIMessage({ content: '', tool_calls: [{ id: `t${turn}-${i}`, name: 'read', args: { path: `src/m${turn}-${i}.ts` }, type: 'tool_call' }], usage_metadata })
      })
    }
    const agent = createAgent({ model, tools: [read], systemPrompt: SYSTEM, middleware: [middleware] })
    const r = await agent.invoke({ messages: mapStoredMessagesToChatMessages(messages) }, { configurable: { thread_id: 'chat-1' }, recursionLimit: 50 })
    process.send({ turn, messages: mapChatMessagesToStoredMessages(r.messages), seen, compactions, summaries })
  } catch (e) {
    process.send({ turn, error: `${e?.code ?? ''} ${e?.stack ?? e}` })
  }
})
process.send({ ready: true })
