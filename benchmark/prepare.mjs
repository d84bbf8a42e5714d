// Preparing a compaction of a long session that was never compacted, contextfold vs pi 0.73.1
// (npm @mariozechner/pi-coding-agent) and, on Node 22 or newer, pi 0.87.1
// (npm @earendil-works/pi-coding-agent, installed into .cache/pi-0.87.1/ as
// __test__/node22/pi-087.spec.ts does), on the same 10,000-message conversation
// (benchmark/store.mjs writes it in both formats), all keeping about 20,000 tokens verbatim:
// contextfold: session.prepareCompaction() (the cut, the transcript blocks, files, facts, what the
//              summary must keep, secrets redacted), handed to JS
// pi:          prepareCompaction(branch, settings) + serializeConversation(convertToLlm(messages))
//              (the cut, file operations, the transcript text its summary prompt embeds)
// Each run prepares on a freshly loaded session (the load is not timed): the first prepare is what
// is measured, nothing is reused from an earlier one.
// Run: node benchmark/prepare.mjs   (pi 0.73.1 only)
//      node scripts/with-node.mjs 24 node benchmark/prepare.mjs   (both pi versions)
// A Markdown table on stdout; release build of the addon.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

import { installPi } from '../scripts/install-pi.mjs'
import { conversation, writeContextfold, writePi, OPTIONS } from './store.mjs'
import { log, median, msSince, now, settle } from './timing.mjs'

const require = createRequire(import.meta.url)
const { SessionFile } = require('../native.js')
const RUNS = 7
const KEEP = 20_000

/** A pi package by the URL of its entry: its exports, prepareCompaction and its version. */
async function loadPi(index) {
  const pi = await import(index)
  // prepareCompaction is not among the package's exports; it is the module pi's compact() uses.
  const { prepareCompaction } = await import(new URL('./core/compaction/compaction.js', index).href)
  const version = JSON.parse(readFileSync(new URL('../package.json', index), 'utf8')).version
  return { ...pi, prepareCompaction, version }
}

const pis = [await loadPi(import.meta.resolve('@mariozechner/pi-coding-agent'))]
if (Number(process.versions.node.split('.')[0]) >= 22) {
  pis.push(await loadPi(pathToFileURL(join(installPi(), 'node_modules', '@earendil-works', 'pi-coding-agent', 'dist', 'index.js')).href))
}

/** Median ms of `run(setup())`, `setup` untimed before each run (then `settle()`), and a warm-up. */
async function time(setup, run) {
  let out = run(setup())
  const ms = []
  for (let i = 0; i < RUNS; i++) {
    const input = setup()
    await settle()
    const t0 = now()
    out = run(input)
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
    const load = () => SessionFile.open(cfPath, { readOnly: true }).load({ ...OPTIONS, ...extra, compaction: { preserveRecentTokens: KEEP } })
    const cf = await time(load, (session) => session.prepareCompaction())
    const chars = (plan) => plan.transcript.concat(plan.turnPrefix).reduce((n, b) => n + b.length, 0)
    rows.push({ name: `contextfold prepareCompaction() (${name}), just loaded`, ms: cf.ms, summarized: cf.out.summarizedIDs.length, chars: chars(cf.out) })
    // A live session: AutoCompactor.afterStep() digests each step's messages as they arrive
    // (warmCompaction), so the prepare at the threshold gathers. The digesting is timed apart.
    const warmed = () => {
      const session = load()
      session.warmCompaction()
      return session
    }
    const live = await time(warmed, (session) => session.prepareCompaction())
    if (JSON.stringify(live.out) !== JSON.stringify(cf.out)) throw new Error('the warmed prepare made another plan')
    rows.push({ name: `contextfold prepareCompaction() (${name}), live (messages digested as they came)`, ms: live.ms, summarized: live.out.summarizedIDs.length, chars: chars(live.out) })
    const warm = await time(load, (session) => session.warmCompaction())
    rows.push({ name: `contextfold warmCompaction() of all 10,000 at once (${name}; a live session does it a step at a time)`, ms: warm.ms, summarized: warm.out, chars: 0 })
  }
  const piMs = {}
  for (const pi of pis) {
    log(`pi ${pi.version}...`)
    const settings = { ...pi.DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: KEEP }
    const p = await time(
      () => pi.SessionManager.open(piPath).getBranch(),
      (branch) => {
        const prep = pi.prepareCompaction(branch, settings)
        const text = pi.serializeConversation(pi.convertToLlm([...prep.messagesToSummarize, ...prep.turnPrefixMessages]))
        return { prep, text }
      },
    )
    rows.push({ name: `pi ${pi.version} prepareCompaction + serializeConversation`, ms: p.ms, summarized: p.out.prep.messagesToSummarize.length + p.out.prep.turnPrefixMessages.length, chars: p.out.text.length })
    piMs[pi.version] = p.ms
  }
  const versions = Object.keys(piMs)
  console.log(`| 10,000 messages, never compacted (median of ${RUNS}) | ms | ${versions.map((v) => `pi ${v} ÷ this`).join(' | ')} | messages summarized | transcript chars |`)
  console.log(`|---|---|${versions.map(() => '---|').join('')}---|---|`)
  for (const r of rows) console.log(`| ${r.name} | ${r.ms.toFixed(1)} | ${versions.map((v) => `${(piMs[v] / r.ms).toFixed(2)}×`).join(' | ')} | ${r.summarized.toLocaleString('en')} | ${r.chars.toLocaleString('en')} |`)
  console.log(`\nNode ${process.version}, ${process.platform}-${process.arch}`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
