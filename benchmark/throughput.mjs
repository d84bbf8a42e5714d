// Exact o200k counting throughput on message-sized chunks of real corpus text, all counters warm,
// plus a check that they agree on the token count.
import { createRequire } from 'node:module'
import { corpusChunks } from './corpus-text.mjs'
import { COUNTERS } from './tokenizers.mjs'
import { now, msSince, median, log, isMain, timeMedian } from './timing.mjs'

const require = createRequire(import.meta.url)
const cf = require('../native.js')

const TARGET_BYTES = 6e6
// Warm-up text is other corpus strings than the timed text: JIT and piece caches get warm on agent
// text in general, so the first timed pass shows counting text not seen before.
const WARMUP_BYTES = 6e5
const MAX_ROUNDS = 5
// A counter stops repeating once its timed passes took this long (js-tiktoken's pass is ~20 s).
const BUDGET_MS = 12_000

/**
 * Extra JS variants worth racing: with no special tokens in the text, ai-tokenizer's
 * `encode(text, 'all')` skips the disallowed-special scan that `count()` does, and counts the same.
 */
async function variants() {
  const { Tokenizer } = await import('ai-tokenizer')
  const tok = new Tokenizer(await import('ai-tokenizer/encoding/o200k_base'))
  return { "ai-tokenizer encode(t,'all')": (text) => tok.encode(text, 'all').length }
}

function pass(count, chunks) {
  let tokens = 0
  const t0 = now()
  for (const c of chunks) tokens += count(c)
  return { ms: msSince(t0), tokens }
}

/** Counts every chunk per pass; rounds rotate the order so no counter always runs first. */
function race(counters, warmup, chunks, bytes) {
  const names = Object.keys(counters)
  for (const name of names) pass(counters[name], warmup)
  const stats = Object.fromEntries(names.map((n) => [n, { times: [], tokens: 0, spent: 0 }]))
  for (let round = 0; round < MAX_ROUNDS; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + round) % names.length]
      const s = stats[name]
      if (round > 0 && s.spent > BUDGET_MS) continue
      const { ms, tokens } = pass(counters[name], chunks)
      if (round > 0 && tokens !== s.tokens) throw new Error(`${name} counted ${tokens}, then ${s.tokens}`)
      s.tokens = tokens
      s.times.push(ms)
      s.spent += ms
      log(`  ${name} round ${round + 1}: ${(bytes / 1e3 / ms).toFixed(2)} MB/s`)
    }
  }
  return names.map((name) => {
    const s = stats[name]
    const ms = median(s.times)
    return { name, tokens: s.tokens, rounds: s.times.length, ms, mbps: bytes / 1e3 / ms, firstMbps: bytes / 1e3 / s.times[0] }
  })
}

/** How many chunks each counter disagrees on with contextfold, and the first such chunk. */
function disagreements(counters, chunks) {
  const out = {}
  for (const [name, count] of Object.entries(counters)) {
    if (name === 'contextfold') continue
    let n = 0
    let first
    for (let i = 0; i < chunks.length; i++) {
      const a = cf.countTokens(chunks[i], 'o200k')
      const b = count(chunks[i])
      if (a !== b) {
        n++
        first ??= { chunk: i, contextfold: a, [name]: b }
      }
    }
    out[name] = { chunks: n, first }
  }
  return out
}


export async function runThroughput() {
  // Chunks take the shuffled strings in order, so the leading ones and the rest share no string.
  const all = corpusChunks({ targetBytes: TARGET_BYTES + WARMUP_BYTES }).chunks
  let split = 0
  for (let b = 0; b < WARMUP_BYTES; split++) b += Buffer.byteLength(all[split])
  const warmup = all.slice(0, split)
  const chunks = all.slice(split)
  const bytes = chunks.reduce((n, c) => n + Buffer.byteLength(c), 0)
  log(`  text: ${chunks.length} chunks, ${(bytes / 1e6).toFixed(2)} MB`)
  const counters = {}
  for (const [name, load] of Object.entries(COUNTERS)) counters[name] = await load()
  Object.assign(counters, await variants())
  for (const count of Object.values(counters)) count('warm up: load tables and compile')

  const exact = race(counters, warmup, chunks, bytes)

  // Only counters whose totals differ get a per-chunk diff (js-tiktoken is too slow to rerun).
  const cfTokens = exact.find((r) => r.name === 'contextfold').tokens
  const differing = Object.fromEntries(Object.entries(counters).filter(([n]) => exact.find((r) => r.name === n).tokens !== cfTokens))
  const diffs = disagreements(differing, chunks)

  // One large text off the JS thread, against the same text counted synchronously.
  const large = chunks.join('\n')
  const largeBytes = Buffer.byteLength(large)
  let asyncTokens = 0
  const asyncMs = await (async () => {
    await cf.countTokensAsync(large, 'o200k')
    const times = []
    for (let i = 0; i < 3; i++) {
      const t0 = now()
      asyncTokens = await cf.countTokensAsync(large, 'o200k')
      times.push(msSince(t0))
    }
    return median(times)
  })()
  const syncLargeMs = timeMedian(() => cf.countTokens(large, 'o200k'), 3)

  // The tokenizer-free estimate, per chunk like the exact counters.
  let estimateTotal = 0
  const estimateMs = timeMedian(() => {
    estimateTotal = 0
    for (const c of chunks) estimateTotal += cf.estimateTokens(c)
  }, MAX_ROUNDS)

  return {
    chunks: chunks.length,
    warmupBytes: warmup.reduce((n, c) => n + Buffer.byteLength(c), 0),
    bytes,
    chunkKB: { min: Math.min(...chunks.map((c) => c.length)) / 1024, max: Math.max(...chunks.map((c) => c.length)) / 1024 },
    exact,
    diffs,
    large: { bytes: largeBytes, asyncMs, asyncTokens, syncMs: syncLargeMs, syncTokens: cf.countTokens(large, 'o200k') },
    estimate: { ms: estimateMs, mbps: bytes / 1e3 / estimateMs, tokens: estimateTotal },
  }
}

if (isMain(import.meta.url)) runThroughput().then((r) => process.stdout.write(JSON.stringify(r)))
