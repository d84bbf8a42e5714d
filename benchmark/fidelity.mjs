// Fidelity: generated coding sessions with planted facts (__test__/fidelity-sessions.mjs: four
// shapes of 170–390 messages, each followed by two later phases), compacted three times in a 48k
// window, with the extractive summarizer and with an LLM stand-in that forgets every second item it
// writes. For each fact kind and each compaction, the share of the facts planted so far that the
// model still reads (`toModelMessages()`), with and without the loss audit; how many summaries
// called an older request the latest; the facts the audit restored (and dropped for its budget);
// and the context after each compaction against before it.
//
//   node benchmark/fidelity.mjs              # Markdown tables, seeds 1 and 2
//   node benchmark/fidelity.mjs --seeds 4    # seeds 1 to 4
//   node benchmark/fidelity.mjs --json       # the figures as JSON
import { extractiveSummarizer } from '../dist/index.js'
import { COMPACTIONS, FACT_KINDS, SHAPE_NAMES, forgetfulSummarizer, generateSession, runSession } from '../__test__/fidelity-sessions.mjs'

const at = process.argv.indexOf('--seeds')
const SEEDS = Array.from({ length: at > 0 ? Number(process.argv[at + 1]) : 2 }, (_, i) => i + 1)
const SUMMARIZERS = [
  ['extractive', () => extractiveSummarizer()],
  ['forgetful LLM', forgetfulSummarizer],
]

const results = []
for (const [name, make] of SUMMARIZERS) {
  for (const audit of [true, false]) {
    const rounds = Array.from({ length: COMPACTIONS }, () => ({
      facts: Object.fromEntries(FACT_KINDS.map((k) => [k, { planted: 0, kept: 0 }])),
      mislabelled: 0,
      restored: 0,
      dropped: 0,
      summaries: 0,
      ratios: [],
    }))
    for (const shape of SHAPE_NAMES) {
      for (const seed of SEEDS) {
        const got = await runSession(generateSession(shape, seed), make, { audit })
        got.forEach((r, i) => {
          const into = rounds[i]
          for (const k of FACT_KINDS) {
            into.facts[k].planted += r.facts[k].planted
            into.facts[k].kept += r.facts[k].kept
          }
          into.mislabelled += r.mislabelled.length ? 1 : 0
          into.restored += r.restored
          into.dropped += r.dropped
          into.summaries++
          into.ratios.push(r.after / r.before)
        })
      }
    }
    results.push({ summarizer: name, audit, rounds })
  }
}

if (process.argv.includes('--json')) {
  console.log(JSON.stringify({ shapes: SHAPE_NAMES, seeds: SEEDS, results }, null, 2))
} else {
  const pct = (x) => `${Math.round(x * 100)}%`
  const sessions = SHAPE_NAMES.length * SEEDS.length
  console.log(`Fidelity after each of ${COMPACTIONS} compactions: facts the model still reads, kept / planted, over ${sessions} sessions (${SHAPE_NAMES.join(', ')}; seeds ${SEEDS.join(', ')})\n`)
  console.log(`| summarizer | audit | compaction | ${FACT_KINDS.join(' | ')} | older request called latest | restored (dropped) | context after / before |`)
  console.log(`|---|---|---:|${FACT_KINDS.map(() => '---:').join('|')}|---:|---:|---:|`)
  for (const r of results) {
    r.rounds.forEach((x, i) => {
      const cells = FACT_KINDS.map((k) => `${x.facts[k].kept}/${x.facts[k].planted}`)
      const ratio = `${pct(Math.min(...x.ratios))}–${pct(Math.max(...x.ratios))}`
      console.log(`| ${r.summarizer} | ${r.audit ? 'on' : 'off'} | ${i + 1} | ${cells.join(' | ')} | ${x.mislabelled}/${x.summaries} | ${x.restored} (${x.dropped}) | ${ratio} |`)
    })
  }
}
