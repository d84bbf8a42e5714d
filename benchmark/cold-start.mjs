// Size and cold start of the addon, before and after a change of its tokenizer tables, side by side
// in one run: `node benchmark/cold-start.mjs [--baseline <addon.node>] [--runs N]`.
// Each run is a fresh Node process that loads the addon (`require`), counts a real ~10 KB chunk with
// o200k (the first count loads the o200k table), and reports both times and its resident memory
// after the count. Runs of the two addons alternate, so both see the same load on a shared machine.
// The baseline is any earlier build of the addon, e.g. one made by `npm install` in a worktree of an
// earlier commit. Size: the addon and its gzip -9 size (what a platform package's tarball carries).
import { spawnSync } from 'node:child_process'
import { readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'

import { corpusChunks } from './corpus-text.mjs'
import { log, median, msSince, now } from './timing.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const option = (name) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}

if (args[0] === '--child') {
  const addon = args[1]
  const text = corpusChunks({ targetBytes: 1, minChars: 10_240, maxChars: 10_241 }).chunks[0]
  const rssBefore = process.memoryUsage().rss
  const t0 = now()
  const cf = createRequire(import.meta.url)(addon)
  const requireMs = msSince(t0)
  const t1 = now()
  const tokens = cf.countTokens(text, 'o200k')
  const firstCountMs = msSince(t1)
  const rss = process.memoryUsage().rss
  process.stdout.write(JSON.stringify({ requireMs, firstCountMs, tokens, rssMB: rss / 2 ** 20, addedMB: (rss - rssBefore) / 2 ** 20 }))
  process.exit(0)
}

const runs = Number(option('--runs') ?? 9)
const addons = [['this build', join(here, '..', 'contextfold.linux-x64-gnu.node')]]
if (option('--baseline')) addons.unshift(['baseline', resolve(option('--baseline'))])

function child(addon) {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', addon], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`cold start of ${addon} failed: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

const results = new Map(addons.map(([name]) => [name, []]))
for (let i = 0; i < runs; i++) {
  for (const [name, addon] of addons) results.get(name).push(child(addon))
}

const rows = addons.map(([name, addon]) => {
  const r = results.get(name)
  const bytes = statSync(addon).size
  const m = (k) => median(r.map((x) => x[k]))
  return {
    name,
    addon,
    sizeMB: bytes / 1e6,
    gzipMB: gzipSync(readFileSync(addon), { level: 9 }).length / 1e6,
    requireMs: m('requireMs'),
    firstCountMs: m('firstCountMs'),
    totalMs: median(r.map((x) => x.requireMs + x.firstCountMs)),
    rssMB: m('rssMB'),
    addedMB: m('addedMB'),
    tokens: r[0].tokens,
  }
})
if (new Set(rows.map((r) => r.tokens)).size !== 1) throw new Error(`the addons count differently: ${rows.map((r) => r.tokens).join(' vs ')}`)

const line = (cells) => `| ${cells.join(' | ')} |`
const out = [
  `Node ${process.version}, ${runs} fresh processes per addon (medians), o200k count of a ${rows[0].tokens}-token corpus chunk`,
  '',
  line(['addon', 'size', 'gzip -9', '`require`', 'first o200k count', 'both', 'RSS after', 'RSS added by load + count']),
  line(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
  ...rows.map((r) =>
    line([
      r.name,
      `${r.sizeMB.toFixed(1)} MB`,
      `${r.gzipMB.toFixed(1)} MB`,
      `${r.requireMs.toFixed(1)} ms`,
      `${r.firstCountMs.toFixed(1)} ms`,
      `${r.totalMs.toFixed(1)} ms`,
      `${r.rssMB.toFixed(0)} MB`,
      `${r.addedMB.toFixed(0)} MB`,
    ]),
  ),
]
if (rows.length === 2) {
  const [before, after] = rows
  out.push(
    '',
    `this build ÷ baseline: size ${(after.sizeMB / before.sizeMB).toFixed(2)}×, gzip ${(after.gzipMB / before.gzipMB).toFixed(2)}×, ` +
      `require + first count ${(after.totalMs / before.totalMs).toFixed(2)}×, RSS added ${(after.addedMB / before.addedMB).toFixed(2)}×`,
  )
}
log(out.join('\n'))
console.log(JSON.stringify(rows))
