// Preparing a compaction of a long session that was never compacted, contextfold vs pi
// (npm @mariozechner/pi-coding-agent), on the same 10,000-message conversation (benchmark/store.mjs
// writes it in both formats), both keeping about 20,000 tokens verbatim:
// contextfold: session.prepareCompaction() (the cut, the transcript blocks, files, facts, what the
//              summary must keep, secrets redacted), handed to JS
// pi:          prepareCompaction(branch, settings) + serializeConversation(convertToLlm(messages))
//              (the cut, file operations, the transcript text its summary prompt embeds)
// Run: node benchmark/prepare.mjs   (a Markdown table on stdout; release build of the addon)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { conversation, writeContextfold, writePi, OPTIONS } from './store.mjs'
import { log, median, msSince, now } from './timing.mjs'

const require = createRequire(import.meta.url)
const { SessionStore } = require('../native.js')
const RUNS = 7
const KEEP = 20_000

const piIndex = import.meta.resolve('@mariozechner/pi-coding-agent')
const pi = await import(piIndex)
// prepareCompaction is not among the package's exports; it is the module pi's compact() uses.
const { prepareCompaction } = await import(new URL('./core/compaction/compaction.js', piIndex).href)
const piVersion = JSON.parse(readFileSync(new URL('../package.json', piIndex), 'utf8')).version

function time(fn) {
  let out = fn()
  const ms = []
  for (let i = 0; i < RUNS; i++) {
    globalThis.gc?.()
    const t0 = now()
    out = fn()
    ms.push(msSince(t0))
  }
  return { ms: median(ms), out }
}

const dir = mkdtempSync(join(tmpdir(), 'contextfold-bench-prepare-'))
try {
  const conv = conversation({ compactAt: [] })
  const cfPath = join(dir, 'session.contextfold.jsonl')
  const piPath = join(dir, 'session.pi.jsonl')
  writeContextfold(cfPath, conv)
  writePi(piPath, conv)
  const rows = []
  for (const [name, extra] of [['exact o200k', { model: { ...OPTIONS.model, providerID: 'openai', modelID: 'gpt-4o' } }], ['estimate', { tokenizer: 'estimate' }]]) {
    log(`contextfold (${name})...`)
    const session = SessionStore.open(cfPath, { readOnly: true }).load({ ...OPTIONS, ...extra, compaction: { preserveRecentTokens: KEEP } })
    const cf = time(() => session.prepareCompaction())
    const chars = cf.out.transcript.concat(cf.out.turnPrefix).reduce((n, b) => n + b.length, 0)
    rows.push({ name: `contextfold prepareCompaction() (${name})`, ms: cf.ms, summarized: cf.out.summarizedIDs.length, chars })
  }
  log('pi...')
  const branch = pi.SessionManager.open(piPath).getBranch()
  const settings = { ...pi.DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: KEEP }
  const p = time(() => {
    const prep = prepareCompaction(branch, settings)
    const text = pi.serializeConversation(pi.convertToLlm([...prep.messagesToSummarize, ...prep.turnPrefixMessages]))
    return { prep, text }
  })
  rows.push({ name: `pi ${piVersion} prepareCompaction + serializeConversation`, ms: p.ms, summarized: p.out.prep.messagesToSummarize.length + p.out.prep.turnPrefixMessages.length, chars: p.out.text.length })
  const piMs = p.ms
  console.log(`| 10,000 messages, never compacted (median of ${RUNS}) | ms | pi ÷ this | messages summarized | transcript chars |`)
  console.log('|---|---|---|---|---|')
  for (const r of rows) console.log(`| ${r.name} | ${r.ms.toFixed(1)} | ${(piMs / r.ms).toFixed(2)}× | ${r.summarized.toLocaleString('en')} | ${r.chars.toLocaleString('en')} |`)
  console.log(`\nNode ${process.version}, ${process.platform}-${process.arch}`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
