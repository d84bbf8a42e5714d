// Traces for the cost benchmark: seeded, generated coding-agent sessions, and the corpus sessions
// long enough to compact. A trace is canonical messages in arrival order, each with `time.created`.
import { basename, join } from 'node:path'
import { importTranscript } from '../dist/index.js'
import { clip, corpusChunks, corpusFiles, corpusStrings, rng } from './corpus-text.mjs'

const MINUTE = 60_000
// Between two corpus messages of which the second has no timestamp.
const STEP = 5_000
const START = Date.UTC(2026, 0, 5, 9, 0, 0)
// Characters per o200k token of the corpus text, to size tool outputs in tokens.
const CHARS_PER_TOKEN = 3.6

const TOOLS = [
  // name, share of calls, median output tokens (log-normal, heavy tail), input builder
  ['read', 0.3, 450, (r, p) => ({ filePath: `src/${p(WORDS)}/${p(WORDS)}.ts` })],
  ['grep', 0.15, 200, (r, p) => ({ pattern: p(WORDS), path: 'src' })],
  ['bash', 0.3, 300, (r, p) => ({ command: p(COMMANDS), description: 'run it' })],
  ['edit', 0.15, 40, (r, p) => ({ filePath: `src/${p(WORDS)}.ts`, oldString: `const ${p(WORDS)} = 1`, newString: `const ${p(WORDS)} = 2` })],
  ['glob', 0.05, 100, (r, p) => ({ pattern: `**/*${p(WORDS)}*` })],
  ['webfetch', 0.05, 2500, (r, p) => ({ url: `https://docs.example.com/${p(WORDS)}` })],
]
const WORDS = ['session', 'store', 'prune', 'compact', 'usage', 'tokens', 'convert', 'policy', 'cache', 'summary', 'audit', 'index']
const COMMANDS = ['npm test', 'cargo test --lib', 'git status', 'git diff', 'npx tsc --noEmit', 'ls -la', 'cargo build --release', 'npm run lint']

/** The text pools the generator draws from: real corpus prose and tool-output-sized chunks. */
function pools() {
  const strings = corpusStrings()
  return {
    prose: strings.filter((s) => s.length >= 40 && s.length <= 1500),
    chunks: corpusChunks({ targetBytes: 6e6, minChars: 2048, maxChars: 20480, seed: 18 }).chunks,
  }
}

let cachedPools
const getPools = () => (cachedPools ??= pools())

/** A log-normal draw with this median and spread (sigma of the log). */
function logNormal(rand, median, sigma) {
  const u = Math.max(rand(), 1e-12)
  const v = rand()
  return median * Math.exp(sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v))
}

/** About `tokens` tokens of tool output: corpus chunks joined, cut at a line. */
function output(rand, chunks, tokens) {
  const chars = Math.max(40, Math.round(tokens * CHARS_PER_TOKEN))
  let text = ''
  while (text.length < chars) text += (text ? '\n' : '') + chunks[Math.floor(rand() * chunks.length)]
  return clip(text, chars)
}

/**
 * A coding agent's session of `n` messages: a user request, then a loop of assistant steps (each
 * with reasoning, a little text and one or two tool calls whose outputs are heavy-tailed, hundreds
 * to tens of thousands of tokens), the last one answering in text. Steps are seconds apart; before
 * a request the user thinks for a minute or so, sometimes over 5 minutes, now and then over an hour.
 */
export function generateTrace(n, seed) {
  const rand = rng(seed * 7919 + n)
  const { prose, chunks } = getPools()
  const pick = (xs) => xs[Math.floor(rand() * xs.length)]
  const messages = []
  let t = START + seed * 86_400_000
  let k = 0
  const id = (p) => `${p}${++k}`
  while (messages.length < n) {
    const gap = rand()
    t += gap < 0.04 ? 60 * MINUTE + rand() * 180 * MINUTE : gap < 0.2 ? 5 * MINUTE + rand() * 40 * MINUTE : 10_000 + rand() * 170_000
    const userID = id('u')
    messages.push({ id: userID, role: 'user', time: { created: t }, parts: [{ type: 'text', id: id('p'), text: clip(pick(prose), 1200) }] })
    const steps = 1 + Math.min(40, Math.floor(logNormal(rand, 6, 0.8)))
    for (let s = 0; s < steps && messages.length < n; s++) {
      t += 2_000 + rand() * 25_000
      const last = s === steps - 1 || messages.length === n - 1
      const parts = []
      if (rand() < 0.6) parts.push({ type: 'reasoning', id: id('p'), text: clip(pick(prose), 200 + Math.floor(rand() * 1200)) })
      parts.push({ type: 'text', id: id('p'), text: clip(pick(prose), last ? 1500 : 300) })
      if (!last) {
        for (let c = 0, calls = rand() < 0.25 ? 2 : 1; c < calls; c++) {
          const roll = rand()
          let acc = 0
          const [tool, , median, input] = TOOLS.find(([, share]) => (acc += share) > roll) ?? TOOLS[0]
          const tokens = Math.min(40_000, Math.max(20, logNormal(rand, median, 1.3)))
          const callID = id('call_')
          const state = { status: 'completed', input: input(rand, pick), output: output(rand, chunks, tokens), title: tool, time: { start: t, end: t + 800 } }
          parts.push({ type: 'tool', id: id('p'), callID, tool, state })
        }
        t += 500 + rand() * 8_000
      }
      messages.push({ id: id('a'), role: 'assistant', parentID: userID, time: { created: t, completed: t + 1_000 }, finish: last ? 'stop' : 'tool-calls', parts })
    }
  }
  return { name: `generated n=${n} seed=${seed}`, messages }
}

/**
 * The corpus sessions as traces, without what their agent's own compactions added (requests,
 * summaries) and without provider usage (it measured the original agent's context, not the
 * replay's). A message without a timestamp (or with one older than the previous) gets one a few
 * seconds after the previous.
 */
export function corpusTraces() {
  const traces = []
  for (const file of corpusFiles()) {
    let imported
    try {
      imported = importTranscript({ path: file })
    } catch {
      continue // not a transcript (the corpus README)
    }
    const kept = imported.messages.filter((m) => m.summary !== true && !m.parts.some((p) => p.type === 'compaction'))
    const first = kept.findIndex((m) => typeof m.time?.created === 'number')
    let t = first < 0 ? START : kept[first].time.created - STEP * (first + 1)
    const messages = kept.map(({ tokens: _usage, ...m }) => {
      t = typeof m.time?.created === 'number' ? Math.max(t, m.time.created) : t + STEP
      return { ...m, time: { ...m.time, created: t } }
    })
    traces.push({ name: `${basename(join(file, '..'))}/${basename(file)}`, messages })
  }
  return traces
}

/**
 * What an agent sends besides the messages, the same for every trace: a system prompt of about
 * 3,000 tokens and the six tools' definitions (JSON schemas), as a coding agent's are.
 */
export function agentOverhead() {
  const rand = rng(1818)
  const { prose } = getPools()
  const paragraphs = []
  for (let chars = 0; chars < 11_000; ) {
    const p = clip(prose[Math.floor(rand() * prose.length)], 800)
    paragraphs.push(p)
    chars += p.length
  }
  const tools = TOOLS.map(([name]) => ({
    name,
    description: clip(prose[Math.floor(rand() * prose.length)], 600),
    inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'Absolute path' }, pattern: { type: 'string' }, command: { type: 'string' } } },
  }))
  return { system: `You are a coding agent working in the user's repository.\n\n${paragraphs.join('\n\n')}`, tools }
}
