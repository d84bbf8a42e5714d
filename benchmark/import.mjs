// Import throughput on the largest corpus transcripts: `importTranscript({ path })` end to end (read,
// decode, rebuild the active branch, pair tools, return the messages to JS), median of RUNS runs.
// For scale, the same file through `JSON.parse` of every line in plain JS (no threading, no
// pairing, nothing returned): a floor for any JS importer.
//
//   node benchmark/import.mjs            (needs ../shared/corpus beside the repo)
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { timeMedian } from './timing.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const { importTranscript } = require('../native.js')
const CORPUS = join(here, '..', '..', 'shared', 'corpus')
const RUNS = 7
const LARGEST = 8

const files = readdirSync(CORPUS, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) => readdirSync(join(CORPUS, d.name)).map((f) => join(d.name, f)))
  .map((f) => ({ f, bytes: statSync(join(CORPUS, f)).size }))
  .sort((a, b) => b.bytes - a.bytes)
  .slice(0, LARGEST)


function jsParse(path) {
  const text = readFileSync(path, 'utf8')
  let n = 0
  for (const line of text.split('\n')) {
    if (!line.trim()) continue
    try {
      JSON.parse(line)
      n++
    } catch {}
  }
  return n
}

const rows = []
let totalBytes = 0
let totalMs = 0
for (const { f, bytes } of files) {
  const path = join(CORPUS, f)
  const r = importTranscript({ path })
  const ms = timeMedian(() => importTranscript({ path }), RUNS)
  const jsMs = timeMedian(() => jsParse(path), RUNS)
  totalBytes += bytes
  totalMs += ms
  rows.push({ f, format: r.format, mb: bytes / 1e6, messages: r.messages.length, ms, jsMs })
}

const mbs = (mb, ms) => (mb / (ms / 1000)).toFixed(0)
console.log(`| file | format | MB | messages | importTranscript | MB/s | JSON.parse per line (JS) |`)
console.log(`|---|---|---:|---:|---:|---:|---:|`)
for (const r of rows) {
  console.log(
    `| \`${r.f}\` | ${r.format} | ${r.mb.toFixed(2)} | ${r.messages} | ${r.ms.toFixed(1)} ms | ${mbs(r.mb, r.ms)} | ${r.jsMs.toFixed(1)} ms (${mbs(r.mb, r.jsMs)} MB/s) |`,
  )
}
console.log(`\nall ${rows.length} files: ${(totalBytes / 1e6).toFixed(1)} MB in ${totalMs.toFixed(0)} ms = ${mbs(totalBytes / 1e6, totalMs)} MB/s (median of ${RUNS} runs each, Node ${process.version})`)
