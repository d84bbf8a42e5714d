// Runs every benchmark, each in its own Node process (so one counter's tables or garbage do not
// weigh on another's numbers), then prints the Markdown report and writes benchmark/results.md.
import { spawnSync } from 'node:child_process'
import { statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { render } from './report.mjs'
import { NAMES } from './tokenizers.mjs'
import { median, log } from './timing.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const FIRST_CALL_RUNS = 3

/** Runs a benchmark script in a child process; its stdout is one JSON result, stderr is progress. */
function child(script, ...args) {
  const r = spawnSync(process.execPath, [join(here, script), ...args], {
    cwd: join(here, '..'),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  })
  if (r.status !== 0) throw new Error(`${script} ${args.join(' ')} exited with ${r.status ?? r.signal}`)
  return JSON.parse(r.stdout)
}

const loadavg = () => os.loadavg().map((x) => x.toFixed(2)).join(' / ')

function environment(started) {
  const addon = join(here, '..', 'contextfold.linux-x64-gnu.node')
  const require = createRequire(import.meta.url)
  return {
    date: new Date(started).toISOString(),
    node: process.version,
    v8: process.versions.v8,
    platform: `${os.platform()} ${os.arch()}`,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    loadStart: loadavg(),
    addon: 'contextfold.linux-x64-gnu.node',
    addonMtime: statSync(addon).mtime.toISOString(),
    binding: require('../native.js').__napiBindingTarget,
  }
}

const started = Date.now()
const env = environment(started)
log(`contextfold benchmark — ${env.cpu} × ${env.cores}, Node ${env.node}`)

log('\n[1/4] first use, cold (fresh process per counter)')
const firstCall = NAMES.map((name) => {
  const runs = Array.from({ length: FIRST_CALL_RUNS }, () => child('first-call.mjs', name))
  const r = { ...runs[0], runs: runs.length }
  for (const k of ['loadMs', 'firstMs', 'secondMs']) r[k] = median(runs.map((x) => x[k]))
  log(`  ${name}: load ${r.loadMs.toFixed(1)} ms, first call ${r.firstMs.toFixed(1)} ms`)
  return r
})

log('\n[2/4] per-turn cost on a native Session')
const perTurn = child('per-turn.mjs')

log('\n[3/4] exact o200k counting throughput')
const throughput = child('throughput.mjs')

log('\n[4/4] session store: open a 10,000-message session and build the model context, vs pi')
const store = child('store.mjs')

env.loadEnd = loadavg()
env.seconds = (Date.now() - started) / 1000
const markdown = render({ env, perTurn, throughput, firstCall, store })
writeFileSync(join(here, 'results.md'), markdown)
console.log(`\n${markdown}`)
log(`written to ${join('benchmark', 'results.md')}`)
