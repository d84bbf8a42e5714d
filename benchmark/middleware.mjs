// The AI SDK middleware's cost per model call, side by side with what an AI SDK user would
// otherwise run before each call, at 100, 1,000 and 10,000 messages of conversation:
// - a wrapped model whose middleware does nothing (the floor);
// - `contextfoldMiddleware`'s transformParams (match the conversation, append the 2 new messages,
//   count, decide): tokenizing the new messages included;
// - the AI SDK's own `pruneMessages` plus the chars/4 estimate its docs recommend.
// And how far each count is from the exact o200k count of what the model reads (corpus text).
// Run: node benchmark/middleware.mjs   (prints a markdown table; release build of the addon)
import { pruneMessages } from 'ai'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'

import { contextfoldMiddleware } from '../dist/ai/index.js'
import { corpusChunks, corpusStrings, rng } from './corpus-text.mjs'
import { median, msSince, now, log } from './timing.mjs'

const SIZES = [100, 1_000, 10_000]
const CALLS = 50
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

async function perCall(n, make) {
  const { msgs, more } = conversation(n, n)
  const run = make()
  let prompt = msgs
  await run(prompt) // the first call takes the whole conversation in
  const ms = []
  for (let i = 0; i < CALLS; i++) {
    prompt = [...prompt, ...more(i)]
    const t0 = now()
    await run(prompt)
    ms.push(msSince(t0))
  }
  return median(ms)
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
  const err = (x) => `${(((x - exact) / exact) * 100).toFixed(1)}%`
  return { exact, rows: [['chars/4 of the JSON (AI SDK docs)', err(chars)], ['contextfold o200k (gpt-4o)', err(s.usage().tokens)], ['contextfold estimate (other models)', err(estimate.usage().tokens)]] }
}

const rows = []
for (const [name, make] of Object.entries(contenders)) {
  const cells = []
  for (const n of SIZES) {
    log(`${name} at ${n} messages...`)
    cells.push(await perCall(n, make))
  }
  rows.push([name, ...cells])
}
console.log(`| per model call (median of ${CALLS}, 2 new messages each) | ${SIZES.map((n) => `${n.toLocaleString('en')} msgs`).join(' | ')} | 10k / 100 |`)
console.log(`|---|${SIZES.map(() => '---').join('|')}|---|`)
for (const [name, ...ms] of rows) console.log(`| ${name} | ${ms.map((x) => `${x.toFixed(3)} ms`).join(' | ')} | ${(ms[2] / ms[0]).toFixed(2)}× |`)
const acc = await accuracy()
console.log(`\n| count of a 2,000-message conversation (exact o200k: ${acc.exact.toLocaleString('en')}) | error |\n|---|---|`)
for (const [name, e] of acc.rows) console.log(`| ${name} | ${e} |`)
console.log(`\nNode ${process.version}, ${process.platform}-${process.arch}`)
