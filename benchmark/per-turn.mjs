// Per-turn cost on a native Session: what an agent pays each turn once the history is long, i.e.
// append(one new message) + usage() + isOverflow(), at 100, 1k and 10k messages of history.
import { createRequire } from 'node:module'
import { corpusChunks, corpusStrings, clip, rng } from './corpus-text.mjs'
import { now, msSince, median, log, isMain } from './timing.mjs'

const require = createRequire(import.meta.url)
const { Session, countTokens, estimateTokens } = require('../native.js')

export const SIZES = [100, 1_000, 10_000]
export const TOKENIZERS = ['o200k', 'estimate']
const ROUNDS = 7
const WARMUP = 200
const APPENDS = 2_000
const MODEL = { providerID: 'openai', modelID: 'gpt-5', limit: { context: 400_000, output: 128_000 } }
const TOOLS = ['bash', 'read', 'grep', 'edit', 'glob']

/** Corpus text pools: message-sized prose and tool outputs of a few KB. */
function pools() {
  const strings = corpusStrings()
  return {
    prose: strings.filter((s) => s.length >= 40 && s.length <= 1200),
    turnText: strings.filter((s) => s.length >= 150 && s.length <= 250),
    outputs: corpusChunks({ targetBytes: 3e6, minChars: 1024, maxChars: 6144, seed: 7 }).chunks,
  }
}

/**
 * A realistic history of `n` messages: each turn is a user message and 1-3 assistant steps; steps
 * carry text and 1-2 completed tool calls, the last step finishes with "stop". About half of the
 * assistants report provider usage, as agents see it when a stream ends.
 */
export function buildHistory(n, { prose, outputs }, seed = 1) {
  const rand = rng(seed)
  const pick = (xs) => xs[Math.floor(rand() * xs.length)]
  const msgs = []
  let chars = 0
  let t = 1_700_000_000_000
  while (msgs.length < n) {
    const userID = `u${msgs.length}`
    const text = clip(pick(prose), 1000)
    chars += text.length
    msgs.push({ id: userID, role: 'user', time: { created: t++ }, parts: [{ type: 'text', id: `${userID}-t`, text }] })
    const steps = 1 + Math.floor(rand() * 3)
    for (let s = 0; s < steps && msgs.length < n; s++) {
      const id = `a${msgs.length}`
      const last = s === steps - 1
      const parts = [{ type: 'text', id: `${id}-t`, text: clip(pick(prose), 600) }]
      if (!last) {
        for (let k = 0, calls = 1 + Math.floor(rand() * 2); k < calls; k++) {
          const output = pick(outputs)
          chars += output.length
          parts.push({
            type: 'tool', id: `${id}-c${k}`, callID: `call_${id}_${k}`, tool: pick(TOOLS),
            state: { status: 'completed', input: { command: clip(pick(prose), 120) }, output, title: 'ran', time: { start: t, end: t + 5 } },
          })
        }
      }
      chars += parts[0].text.length
      const msg = { id, role: 'assistant', parentID: userID, time: { created: t++, completed: t }, parts, finish: last ? 'stop' : 'tool-calls', model: { providerID: MODEL.providerID, modelID: MODEL.modelID } }
      if (rand() < 0.5) msg.tokens = { input: Math.round(chars / 4), output: Math.round(parts[0].text.length / 4), cacheRead: 0 }
      msgs.push(msg)
    }
  }
  return msgs
}

/** The small per-turn messages (~200 chars), each with a new id, created before timing. */
function turnMessages(tag, texts, count) {
  const msgs = []
  for (let i = 0; i < count; i++) {
    const id = `turn-${tag}-${i}`
    msgs.push({ id, role: 'user', time: { created: 1_800_000_000_000 + i }, parts: [{ type: 'text', id: `${id}-t`, text: texts[i % texts.length] }] })
  }
  return msgs
}

function perTurn(history, tokenizer, texts, round) {
  const t0 = now()
  const session = Session.fromMessages(history, { model: MODEL, tokenizer })
  const buildMs = msSince(t0)
  const warm = turnMessages(`w${round}`, texts, WARMUP)
  const timed = turnMessages(`r${round}`, texts, APPENDS)
  let sink = 0
  for (const m of warm) {
    session.append(m)
    sink += session.usage().tokens + (session.isOverflow() ? 1 : 0)
  }
  const t1 = now()
  for (const m of timed) {
    session.append(m)
    sink += session.usage().tokens + (session.isOverflow() ? 1 : 0)
  }
  const ms = msSince(t1) / APPENDS
  if (session.length !== history.length + WARMUP + APPENDS || !(sink > 0)) throw new Error('per-turn appends went missing')
  return { ms, buildMs }
}

/** Tokenizing the per-turn texts alone, through the same N-API boundary. */
function tokenizeOnly(tokenizer, texts) {
  const count = tokenizer === 'estimate' ? (s) => estimateTokens(s) : (s) => countTokens(s, tokenizer)
  const run = () => {
    let sink = 0
    const t0 = now()
    for (let i = 0; i < APPENDS; i++) sink += count(texts[i % texts.length])
    if (!(sink > 0)) throw new Error('nothing counted')
    return msSince(t0) / APPENDS
  }
  for (let i = 0; i < 3; i++) run()
  return median(Array.from({ length: ROUNDS }, run))
}

export function runPerTurn() {
  const p = pools()
  const texts = p.turnText.slice(0, 500)
  const histories = SIZES.map((n) => buildHistory(n, p))
  const results = []
  for (const tokenizer of TOKENIZERS) {
    // Sizes interleave within each round so drift in machine load hits them alike.
    const rounds = SIZES.map(() => [])
    for (let r = 0; r < ROUNDS; r++) SIZES.forEach((_, i) => rounds[i].push(perTurn(histories[i], tokenizer, texts, r)))
    const row = { tokenizer, sizes: {}, tokenizeMs: tokenizeOnly(tokenizer, texts), textChars: median(texts.map((s) => s.length)) }
    SIZES.forEach((n, i) => {
      const historyMB = Buffer.byteLength(JSON.stringify(histories[i])) / 1e6
      row.sizes[n] = { ms: median(rounds[i].map((x) => x.ms)), buildMs: median(rounds[i].map((x) => x.buildMs)), historyMB }
      log(`  per-turn ${tokenizer} n=${n}: ${(row.sizes[n].ms * 1000).toFixed(1)} µs/turn (build ${row.sizes[n].buildMs.toFixed(0)} ms)`)
    })
    results.push(row)
  }
  return { rounds: ROUNDS, warmup: WARMUP, appends: APPENDS, results }
}

if (isMain(import.meta.url)) process.stdout.write(JSON.stringify(runPerTurn()))
