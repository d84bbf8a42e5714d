// The LangChain.js middleware's cost per model call, beside LangChain's own
// `summarizationMiddleware`, at 100, 1,000 and 10,000 messages of a thread:
// - a middleware that hands the request on (the floor);
// - `contextfoldLangChain`'s `wrapModelCall` (convert the request's messages, match the thread,
//   append the 2 new ones, count system prompt and tools, decide; a new array for the handler), for
//   gpt-4o (the cache-aware prune policy leaves the cached prefix alone) and for a model without
//   prices (old outputs are pruned, so every call hands back the whole pruned view); and with
//   gpt-4o's own window from the catalog, where the first call compacts the thread (not timed) and
//   the later ones work on the summary and the kept tail;
// - the AI SDK middleware on the same thread as ModelMessages (the engine both share);
// - `summarizationMiddleware`'s `beforeModel` with a token trigger (it counts every message with
//   `countTokensApproximately` on each call), both with a window that is never reached, so the
//   figures are the price of deciding, not of summarizing.
// Each call adds an AIMessage with a tool call and its ToolMessage (corpus text), as a tool loop does.
// Run: node benchmark/langchain.mjs   (prints a markdown table; release build of the addon)
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages'
import { fakeModel } from '@langchain/core/testing'
import { summarizationMiddleware, tool } from 'langchain'
import { z } from 'zod'

import { contextfoldMiddleware } from '../dist/ai/index.js'
import { contextfoldLangChain } from '../dist/langchain/index.js'
import { toModelMessages } from '../dist/langchain/messages.js'
import { corpusChunks, corpusStrings, rng } from './corpus-text.mjs'
import { perCallTable } from './timing.mjs'

const SIZES = [100, 1_000, 10_000]
const CALLS = 50
const BUDGET_MS = 15_000 // per contender and size
const WINDOW = 100_000_000

const strings = corpusStrings().filter((s) => s.length >= 40 && s.length <= 1_200)
const outputs = corpusChunks({ targetBytes: 3e6, minChars: 512, maxChars: 4096, seed: 11 }).chunks
const bash = tool(async () => '', { name: 'bash', description: 'Runs a shell command.', schema: z.object({ command: z.string() }) })
const model = fakeModel()
// As a `ChatOpenAI({ model: 'gpt-4o' })` names itself: the catalog gives its prices, and the cache-aware prune policy keeps the cached prefix.
const gpt4o = Object.defineProperties(fakeModel(), { model: { value: 'gpt-4o' }, _llmType: { value: () => 'openai' } })
const system = new SystemMessage('You are a coding agent.')

/** A thread of about `n` messages: a request, then tool steps with corpus outputs. */
function thread(n, seed) {
  const rand = rng(seed)
  const pick = (xs) => xs[Math.floor(rand() * xs.length)]
  const step = (i) => [
    new AIMessage({ id: `a${i}`, content: pick(strings), tool_calls: [{ id: `c${i}`, name: 'bash', args: { command: `cat file${i}.ts` }, type: 'tool_call' }] }),
    new ToolMessage({ id: `t${i}`, content: pick(outputs), tool_call_id: `c${i}`, name: 'bash' }),
  ]
  const msgs = [new HumanMessage({ id: 'h', content: pick(strings) })]
  for (let i = 0; msgs.length < n; i++) msgs.push(...step(i))
  return { msgs, more: (i) => step(n + i) }
}

const runtime = { configurable: { thread_id: 'bench' }, context: {}, store: undefined, signal: undefined }
const answer = new AIMessage('ok')

const request = (messages, m = model) => ({ model: m, messages, systemMessage: system, systemPrompt: system.text, tools: [bash], state: { messages }, runtime })

const contenders = {
  'pass-through middleware': () => async (messages) => (async (req, handler) => handler({ ...req, messages: [...req.messages] }))(request(messages), async () => answer),
  contextfoldLangChain: () => {
    const mw = contextfoldLangChain({ contextWindow: WINDOW, maxOutputTokens: 4_096 })
    return (messages) => mw.wrapModelCall(request(messages, gpt4o), async () => answer)
  },
  "contextfoldLangChain, gpt-4o's 128k window (the thread compacted)": () => {
    const mw = contextfoldLangChain({ maxOutputTokens: 4_096 })
    return (messages) => mw.wrapModelCall(request(messages, gpt4o), async () => answer)
  },
  'contextfoldLangChain, a model without prices': () => {
    const mw = contextfoldLangChain({ contextWindow: WINDOW, maxOutputTokens: 4_096 })
    return (messages) => mw.wrapModelCall(request(messages), async () => answer)
  },
  // The same thread as AI SDK ModelMessages through the AI SDK middleware (the engine both share), converted outside the timing.
  'contextfoldMiddleware (AI SDK), same thread': () => {
    const mw = contextfoldMiddleware({ contextWindow: WINDOW })
    const held = [{ role: 'system', content: system.text }]
    let seen = 0
    return (messages) => {
      held.push(...toModelMessages(messages.slice(seen)).converted.messages)
      seen = messages.length
      const prompt = [...held]
      return mw.transformParams({ type: 'generate', params: { prompt, maxOutputTokens: 4_096 }, model: { provider: 'openai.chat', modelId: 'gpt-4o' } })
    }
  },
  'summarizationMiddleware (trigger: tokens)': () => {
    const mw = summarizationMiddleware({ model, trigger: { tokens: WINDOW } })
    return (messages) => mw.beforeModel({ messages }, runtime)
  },
}

await perCallTable(contenders, SIZES, (n) => thread(n, n), { calls: CALLS, budgetMs: BUDGET_MS, ours: 'contextfoldLangChain' })
console.log(`\nNode ${process.version}, ${process.platform}-${process.arch}`)
