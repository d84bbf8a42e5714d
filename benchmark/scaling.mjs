// Scaling of every public Session call at 1k, 10k and 100k messages (no call may grow faster than
// the history it walks), and the native memory a Session takes for the text it holds.
// Run: node benchmark/scaling.mjs   (writes benchmark/scaling.md)
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { msSince, now, log, timeMedian, timeSettled } from './timing.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const { Session } = createRequire(import.meta.url)(join(here, '..', 'native.js'))
const SIZES = [1_000, 10_000, 100_000]
const OPTS = { model: { limit: { context: 200_000, output: 32_000 } }, tokenizer: 'estimate', compaction: { pruneProtect: 2_000, pruneMinimum: 100 } }

/** A conversation of `n` messages: turns of a user request and an answer with a tool call. */
function history(n) {
  const out = []
  for (let i = 0; out.length < n; i++) {
    out.push({ id: `u${i}`, role: 'user', parts: [{ type: 'text', id: `u${i}t`, text: `step ${i}: fix the test in src/mod${i % 50}.rs` }] })
    out.push({
      id: `a${i}`, role: 'assistant', finish: 'tool-calls',
      tokens: i % 10 === 0 ? { input: 1_000 + i, output: 20 } : undefined,
      parts: [
        { type: 'text', id: `a${i}t`, text: 'Reading the file first.' },
        { type: 'tool', id: `a${i}p`, callID: `c${i}`, tool: 'read', state: { status: 'completed', input: { filePath: `src/mod${i % 50}.rs` }, output: `fn f${i}() {}\n`.repeat(20) } },
      ],
    })
  }
  return out.slice(0, n)
}


const CALLS = {
  'append + usage + isOverflow': (s, n) => {
    let k = 0
    return () => {
      s.append({ id: `x${n}-${k++}`, role: 'user', parts: [{ type: 'text', id: `x${n}-${k}t`, text: 'and one more thing' }] })
      s.usage()
      s.isOverflow()
    }
  },
  'append + warmCompaction() (what AutoCompactor adds per step)': (s, n) => {
    s.warmCompaction()
    let k = 0
    return () => {
      s.append({ id: `w${n}-${k++}`, role: 'assistant', parts: [{ type: 'text', id: `w${n}-${k}t`, text: 'Done. Exit code: 0' }] })
      s.warmCompaction()
    }
  },
  'update (last message)': (s, n, msgs) => () => s.update(msgs[n - 1]),
  'usage()': (s) => () => s.usage(),
  'select()': (s) => () => s.select(),
  'turns()': (s) => () => s.turns(),
  'prune() (no-op after the first)': (s) => () => s.prune(),
  'breakdown()': (s) => () => s.breakdown(),
  // Each message digested as it came (AutoCompactor.afterStep), as in a live session.
  'prepareCompaction()': (s) => {
    s.warmCompaction()
    return () => s.prepareCompaction()
  },
  'context()': (s) => () => s.context(),
  'toModelMessages()': (s) => () => s.toModelMessages(),
  'messages()': (s) => () => s.messages(),
}

/** The calls whose output is the whole history (or its turns). */
const WHOLE = new Set(['turns()', 'prepareCompaction()', 'context()', 'toModelMessages()', 'messages()'])

// Memory first, in a fresh process: native heap growth for a session holding ~100 MB of text.
// After a collection and a pause, so the allocator has returned what was only passing through.
async function rss() {
  globalThis.gc?.()
  await new Promise((resolve) => setTimeout(resolve, 300))
  return process.memoryUsage().rss
}
const text = 'lorem ipsum dolor sit amet, consectetur adipiscing elit; '.repeat(200) // ~11 KB
const before = await rss()
const big = new Session(OPTS)
let held = 0
for (let i = 0; i < 9_000; i++) {
  big.append({ id: `m${i}`, role: i % 2 ? 'assistant' : 'user', parts: [{ type: 'text', id: `m${i}t`, text }] })
  held += text.length
}
const grown = (await rss()) - before
const ratio = grown / held
// What the digests a prepare gathers add (each message's transcript block and facts).
big.warmCompaction()
const digested = (await rss()) - before


const rows = []
for (const [name, make] of Object.entries(CALLS)) rows.push({ name, ms: [] })
const build = []
for (const n of SIZES) {
  const msgs = history(n)
  let t0 = now()
  const base = Session.fromMessages(msgs, OPTS)
  build.push(msSince(t0))
  log(`${n} messages built in ${build.at(-1).toFixed(0)} ms`)
  for (const row of rows) {
    const s = row.name.startsWith('append') || row.name.startsWith('prune') || row.name.startsWith('prepare') ? Session.fromMessages(msgs, OPTS) : base
    // A call that hands the whole history to JS runs after a collection, so it does not pay for
    // the garbage of the one before (tens of MB at 100k messages); per-turn calls run back to back.
    const fn = CALLS[row.name](s, n, msgs)
    row.ms.push(WHOLE.has(row.name) ? await timeSettled(fn, 5) : timeMedian(fn, 5))
  }
}

const f = (x) => (x < 1 ? x.toFixed(3) : x.toFixed(1))
let md = `# Scaling and memory\n\nNode ${process.version}, release build, tokenizer \`estimate\`. Median ms per call.\n\n`
md += `| call | ${SIZES.map((n) => `${n.toLocaleString('en')} msgs`).join(' | ')} | 100k ÷ 10k |\n|---|${SIZES.map(() => '---:').join('|')}|---:|\n`
for (const r of rows) md += `| ${r.name} | ${r.ms.map(f).join(' | ')} | ${(r.ms[2] / r.ms[1]).toFixed(1)}× |\n`
md += `| \`Session.fromMessages\` | ${build.map(f).join(' | ')} | ${(build[2] / build[1]).toFixed(1)}× |\n`
md += `\nLinear calls grow 10× per row; the per-turn calls stay flat. \`prepareCompaction()\` runs on a session whose messages were digested as they came (\`warmCompaction()\`, which \`AutoCompactor\` calls after each step). Memory: a Session holding ${(held / 1e6).toFixed(0)} MB of text grew the process by ${(grown / 1e6).toFixed(0)} MB (${ratio.toFixed(2)}× the text); with every message digested, by ${(digested / 1e6).toFixed(0)} MB (${(digested / held).toFixed(2)}×).\n`
writeFileSync(join(here, 'scaling.md'), md)
console.log(md)
