// Cold start of one counter, run in a fresh process per counter: loading it (import + tables) and
// its first count of a real ~10 KB chunk, the cost an agent pays once before counting is warm.
import { corpusChunks } from './corpus-text.mjs'
import { COUNTERS } from './tokenizers.mjs'
import { now, msSince } from './timing.mjs'

const name = process.argv[2]
if (!COUNTERS[name]) throw new Error(`usage: node first-call.mjs <${Object.keys(COUNTERS).join('|')}>`)
// Picked before timing: reading the corpus is not the counter's cost.
const text = corpusChunks({ targetBytes: 1, minChars: 10_240, maxChars: 10_241 }).chunks[0]

const t0 = now()
const count = await COUNTERS[name]()
const loadMs = msSince(t0)
const t1 = now()
const tokens = count(text)
const firstMs = msSince(t1)
const t2 = now()
count(text)
const secondMs = msSince(t2)
process.stdout.write(JSON.stringify({ name, loadMs, firstMs, secondMs, tokens, chars: text.length }))
