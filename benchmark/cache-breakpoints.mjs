// What placing Anthropic cache breakpoints costs per model call, at 1,000 and 10,000 messages of
// conversation: `Session.cacheBreakpoints` alone, and the middleware's whole `transformParams` for an
// Anthropic model (which places them) beside the same call for an OpenAI model (which does not),
// without pruning; then with the default prune policy, which hands back converted messages.
// Each call adds an answer with a tool call and its result (corpus text, 0.5–4 KB outputs).
// Run: node benchmark/cache-breakpoints.mjs   (release build of the addon; prints a markdown table)
import { Session } from '../dist/index.js'
import { contextfoldMiddleware } from '../dist/ai/index.js'
import { corpusChunks, corpusStrings, rng } from './corpus-text.mjs'
import { median, msSince, now } from './timing.mjs'

const SIZES = [1_000, 10_000]
const CALLS = 30
const WINDOW = 100_000_000 // large: the cost of placing breakpoints, not of compacting
const SYSTEM = [{ role: 'system', content: 'You are a coding agent.' }]

const strings = corpusStrings().filter((s) => s.length >= 40 && s.length <= 1_200)
const outputs = corpusChunks({ targetBytes: 3e6, minChars: 512, maxChars: 4096, seed: 11 }).chunks

/** A provider-level conversation of about `n` messages, and the two messages each later call adds. */
function conversation(n, seed) {
  const rand = rng(seed)
  const pick = (xs) => xs[Math.floor(rand() * xs.length)]
  const step = (i) => [
    { role: 'assistant', content: [{ type: 'text', text: pick(strings) }, { type: 'tool-call', toolCallId: `c${i}`, toolName: 'bash', input: { command: `cat file${i}.ts` } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${i}`, toolName: 'bash', output: { type: 'text', value: pick(outputs) } }] },
  ]
  const msgs = [{ role: 'user', content: [{ type: 'text', text: pick(strings) }] }]
  for (let i = 0; msgs.length < n; i++) msgs.push(...step(i))
  return { msgs, more: (i) => step(n + i) }
}

/** Median ms of a call after appending the next step, `CALLS` times. */
async function perCall(n, call) {
  const { msgs, more } = conversation(n, n)
  let prompt = msgs
  await call(prompt, true)
  const ms = []
  for (let i = 0; i < CALLS; i++) {
    prompt = [...prompt, ...more(i)]
    const t0 = now()
    await call(prompt, false)
    ms.push(msSince(t0))
  }
  return median(ms)
}

/** The middleware's `transformParams` for `provider`, with the prune policy given. */
function middleware(provider, prune) {
  return () => {
    const mw = contextfoldMiddleware({ contextWindow: WINDOW, ...(prune ? { prune } : {}) })
    const model = { provider, modelId: provider.startsWith('anthropic') ? 'claude-sonnet-4-5' : 'gpt-4o' }
    return (prompt) => mw.transformParams({ type: 'generate', params: { prompt: [...SYSTEM, ...prompt], maxOutputTokens: 4096 }, model })
  }
}

const contenders = {
  'Session.cacheBreakpoints (and the append before it)': () => {
    const session = new Session({ model: { limit: { context: WINDOW } } })
    let held = 0
    return (prompt) => {
      session.appendModelMessages(prompt.slice(held))
      held = prompt.length
      return session.cacheBreakpoints(SYSTEM)
    }
  },
  'transformParams, Anthropic model (breakpoints placed), no prune': middleware('anthropic.messages', 'never'),
  'transformParams, OpenAI model (none placed), no prune': middleware('openai.chat', 'never'),
  // The default prune policy clears old outputs at the first call here: from then on every call
  // hands back the session's messages, converted whole (`Conversation.hand`).
  'transformParams, Anthropic model, default prune policy': middleware('anthropic.messages'),
}

console.log(`| per model call (median of ${CALLS}, 2 new messages each) | ${SIZES.map((n) => `${n.toLocaleString('en')} msgs`).join(' | ')} |`)
console.log(`|---|${SIZES.map(() => '---').join('|')}|`)
for (const [name, make] of Object.entries(contenders)) {
  const cells = []
  for (const n of SIZES) cells.push(`${(await perCall(n, make())).toFixed(3)} ms`)
  console.log(`| ${name} | ${cells.join(' | ')} |`)
}
