// The AI SDK middleware's cost per model call, side by side with what an AI SDK user would
// otherwise run before each call, at 100, 1,000 and 10,000 messages of conversation:
// - a wrapped model whose middleware does nothing (the floor);
// - `contextfoldMiddleware`'s transformParams (match the conversation, append the 2 new messages,
//   count, decide): tokenizing the new messages included;
// - the AI SDK's own `pruneMessages` plus the chars/4 estimate its docs recommend;
// - LangChain.js `trimMessages` with `ChatOpenAI` as its token counter (o200k, the encoding it would
//   fetch for gpt-4o), and the check `summarizationMiddleware` runs before each call
//   (`countTokensApproximately`), each on LangChain messages kept beside the conversation;
// - Mastra's `TokenLimiterProcessor.processLLMRequest` on the provider prompt.
// And how far each count is from the exact o200k count of what the model reads (corpus text).
// Run: node benchmark/middleware.mjs   (prints a markdown table; release build of the addon;
// LangChain.js and Mastra need Node 22+, so on Node 20 it runs itself again on Node 24)
import { onNode22, loadPeers } from './peers.mjs'

onNode22(import.meta.url)

const { pruneMessages } = await import('ai')
const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base')
const { contextfoldMiddleware } = await import('../dist/ai/index.js')
const { corpusChunks, corpusStrings, rng } = await import('./corpus-text.mjs')
const { perCallTable } = await import('./timing.mjs')
const peers = await loadPeers()

const SIZES = [100, 1_000, 10_000]
const CALLS = 50
// Everything fits the window, the best case for trimMessages: one count of the whole conversation
// per call. (Over budget it drops one message at a time and counts what remains again: quadratic.)
const BUDGET_MS = 15_000 // per contender and size: the slowest ones get fewer calls
const WINDOW = 100_000_000 // large: the cost of counting and deciding, not of compacting

const strings = corpusStrings().filter((s) => s.length >= 40 && s.length <= 1_200)
const outputs = corpusChunks({ targetBytes: 3e6, minChars: 512, maxChars: 4096, seed: 11 }).chunks

/** A provider-level prompt of about `n` messages: a request, then tool steps with corpus outputs. */
function conversation(n, seed) {
  const rand = rng(seed)
  const pick = (xs) => xs[Math.floor(rand() * xs.length)]
  const msgs = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: [{ type: 'text', text: pick(strings) }] }]
  for (let i = 0; msgs.length < n; i++) step(msgs, i, pick)
  return { msgs, more: (i) => step([], n + i, pick) }
}

function step(msgs, i, pick) {
  msgs.push({ role: 'assistant', content: [{ type: 'text', text: pick(strings) }, { type: 'tool-call', toolCallId: `c${i}`, toolName: 'bash', input: { command: `cat file${i}.ts` } }] })
  msgs.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${i}`, toolName: 'bash', output: { type: 'text', value: pick(outputs) } }] })
  return msgs
}

const model = { provider: 'openai.chat', modelId: 'gpt-4o' }

/** A LangChain message for a provider-level one (what a LangChain agent would hold instead). */
function toLangChain(m) {
  const text = (parts) => parts.filter((p) => p.type === 'text').map((p) => p.text).join('')
  if (m.role === 'system') return new peers.SystemMessage(m.content)
  if (m.role === 'user') return new peers.HumanMessage(text(m.content))
  if (m.role === 'assistant') {
    const calls = m.content.filter((p) => p.type === 'tool-call').map((p) => ({ id: p.toolCallId, name: p.toolName, args: p.input, type: 'tool_call' }))
    return new peers.AIMessage({ content: text(m.content), tool_calls: calls })
  }
  const [r] = m.content
  return new peers.ToolMessage({ content: r.output.value, tool_call_id: r.toolCallId, name: r.toolName })
}

/** LangChain messages kept beside the prompt: only the new messages are converted each call. */
function langChainHistory() {
  const held = []
  return (prompt) => {
    for (let i = held.length; i < prompt.length; i++) held.push(toLangChain(prompt[i]))
    return held
  }
}

/** `ChatOpenAI` counts with the encoding it fetches from tiktoken.pages.dev: given here, offline. */
function chatOpenAI() {
  const chat = new peers.ChatOpenAI({ model: 'gpt-4o', apiKey: 'unused' })
  chat._encoding = new peers.Tiktoken(peers.o200kRanks)
  return chat
}

const contenders = {
  'no-op middleware': () => {
    const mw = { transformParams: async ({ params }) => params }
    return (prompt) => mw.transformParams({ type: 'generate', params: { prompt }, model })
  },
  contextfoldMiddleware: () => {
    const mw = contextfoldMiddleware({ contextWindow: WINDOW })
    return (prompt) => mw.transformParams({ type: 'generate', params: { prompt, maxOutputTokens: 4096 }, model })
  },
  'pruneMessages + chars/4': () => async (prompt) => {
    const pruned = pruneMessages({ messages: prompt, toolCalls: 'before-last-2-messages' })
    return JSON.stringify(pruned).length / 4
  },
  'LangChain trimMessages (ChatOpenAI counter)': () => {
    const history = langChainHistory()
    const tokenCounter = chatOpenAI()
    return (prompt) => peers.trimMessages(history(prompt), { maxTokens: WINDOW, strategy: 'last', tokenCounter, startOn: 'human', includeSystem: true })
  },
  'LangChain summarizationMiddleware check': () => {
    const history = langChainHistory()
    return async (prompt) => peers.countTokensApproximately(history(prompt)) > WINDOW
  },
  'Mastra TokenLimiterProcessor': () => {
    const limiter = new peers.TokenLimiterProcessor({ limit: WINDOW })
    return (prompt) => limiter.processLLMRequest({ prompt })
  },
}

/** Text the model reads of a message: its texts, tool inputs and outputs. */
function textOf(m) {
  if (typeof m.content === 'string') return m.content
  return m.content.map((p) => p.text ?? (p.input ? JSON.stringify(p.input) : '') + (p.output ? p.output.value : '')).join('\n')
}

async function accuracy() {
  const { msgs } = conversation(2_000, 7)
  const exact = msgs.reduce((n, m) => n + countTokens(textOf(m)), 0)
  const chars = JSON.stringify(msgs).length / 4
  const { Session } = await import('../dist/index.js')
  const s = Session.fromModelMessages(msgs.slice(1), { model: { providerID: 'openai', modelID: 'gpt-4o', limit: { context: WINDOW } } })
  s.setOverhead({ system: [msgs[0].content] })
  const estimate = Session.fromModelMessages(msgs.slice(1), { model: { limit: { context: WINDOW } }, tokenizer: 'estimate' })
  estimate.setOverhead({ system: [msgs[0].content] })
  const langChain = langChainHistory()(msgs)
  const trimCount = (await chatOpenAI().getNumTokensFromMessages(langChain)).totalCount
  const limiter = new peers.TokenLimiterProcessor({ limit: WINDOW })
  // What the limiter weighs a prompt at: its per-conversation constant plus each message's count.
  const mastra = msgs.reduce((n, m) => n + limiter.countPromptMessageTokens(m), peers.TokenLimiterProcessor.TOKENS_PER_CONVERSATION)
  const err = (x) => `${(((x - exact) / exact) * 100).toFixed(1)}%`
  return {
    exact,
    rows: [
      ['chars/4 of the JSON (AI SDK docs)', err(chars)],
      ['LangChain ChatOpenAI counter (trimMessages)', err(trimCount)],
      ['LangChain countTokensApproximately (summarizationMiddleware)', err(peers.countTokensApproximately(langChain))],
      ['Mastra TokenLimiterProcessor', err(mastra)],
      ['contextfold o200k (gpt-4o)', err(s.usage().tokens)],
      ['contextfold estimate (other models)', err(estimate.usage().tokens)],
    ],
  }
}

await perCallTable(contenders, SIZES, (n) => conversation(n, n), { calls: CALLS, budgetMs: BUDGET_MS, ours: 'contextfoldMiddleware' })
const acc = await accuracy()
console.log(`\n| count of a 2,000-message conversation (exact o200k: ${acc.exact.toLocaleString('en')}) | error |\n|---|---|`)
for (const [name, e] of acc.rows) console.log(`| ${name} | ${e} |`)
console.log(`\nNode ${process.version}, ${process.platform}-${process.arch}`)
