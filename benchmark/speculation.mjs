// Time to continue at overflow: how long the agent waits in `afterStep()` when the context
// overflows, with `speculateAt: 0.7` (the summary written in the background beforehand) and
// without, on the same session and a summarizer with a model-like latency (1 s plus 1 ms per 400
// prompt characters). Each model step takes 300 ms, as the agent's own calls would.
//
//   node benchmark/speculation.mjs [--json]
import { AutoCompactor, Session } from '../dist/index.js'

const STEP_MS = 300
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const slowSummarizer = async (req) => {
  await sleep(1000 + req.prompt.length / 400)
  return { text: `## Goal\n- Continue the work (${req.plan.summarizedIDs.length} messages summarized).`, finishReason: 'stop' }
}

const words = ['alpha', 'parser', 'render', 'buffer', 'module', 'vector', 'signal', 'report', 'column', 'stream']
const filler = (n, k) => Array.from({ length: n }, (_, i) => words[(i * 7 + k) % words.length]).join(' ')

async function run(speculateAt) {
  const session = new Session({ model: { limit: { context: 48_000, output: 8_000 } }, tokenizer: 'estimate' })
  const auto = new AutoCompactor(session, { summarizer: slowSummarizer, ...(speculateAt ? { speculateAt } : {}) })
  const waits = []
  let speculative = 0
  for (let t = 0; waits.length < 3; t++) {
    session.append({ id: `u${t}`, role: 'user', parts: [{ type: 'text', id: `u${t}t`, text: `Step ${t}: ${filler(30, t)}` }] })
    session.append({ id: `a${t}`, role: 'assistant', finish: 'stop', parts: [{ type: 'text', id: `a${t}t`, text: filler(900, t) }] })
    const start = performance.now()
    const r = await auto.afterStep()
    const ms = performance.now() - start
    if (r.compaction) {
      waits.push(ms)
      if (r.speculative) speculative++
    } else await sleep(STEP_MS)
  }
  return { speculateAt: speculateAt ?? null, waits, speculative }
}

const without = await run(undefined)
const withSpec = await run(0.7)
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const result = {
  node: process.version,
  without: { ...without, median: median(without.waits) },
  with: { ...withSpec, median: median(withSpec.waits) },
  ratio: median(without.waits) / median(withSpec.waits),
}
if (process.argv.includes('--json')) console.log(JSON.stringify(result, null, 2))
else {
  const f = (ms) => `${ms.toFixed(ms < 10 ? 2 : 0)} ms`
  console.log('| | time to continue at overflow (median of 3) | each | from a speculative summary |')
  console.log('|---|---:|---|---:|')
  console.log(`| without speculation | ${f(result.without.median)} | ${without.waits.map(f).join(', ')} | — |`)
  console.log(`| speculateAt: 0.7 | ${f(result.with.median)} | ${withSpec.waits.map(f).join(', ')} | ${withSpec.speculative} of 3 |`)
  console.log(`\n${result.ratio.toFixed(0)}x less waiting (Node ${process.version})`)
}
