// `contextfold view`: how long the page takes to load in chromium, for the largest corpus session
// (by messages) and for a generated one of 10,000 messages and 50 compactions:
// `node benchmark/view.mjs [--runs N]` (needs /usr/bin/chromium: `apt-get install -y chromium`).
// Per session: the time `view --out` takes (import, counting, the replay over time, the page), the
// page's size, then in chromium (a fresh profile, headless) the median over N loads of the time
// from the start of navigation to the page drawn (`window.contextfoldReady`), and of a search over
// every message. Measured here, never asserted.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

import { chromium } from 'playwright-core'

import { log, median, msSince, now } from './timing.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..')
const CLI = join(root, 'dist', 'cli.js')
const args = process.argv.slice(2)
const runs = Number(args[args.indexOf('--runs') + 1] || 5)
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync']

/** 10,000 contextfold messages (turns of a user message and a tool call with its output) and 50 compactions among them. */
function generated(file) {
  const lines = []
  let n = 0
  const add = (m) => {
    lines.push(JSON.stringify(m))
    n++
  }
  const turns = 4_950
  let lastTail
  for (let t = 0; t < turns; t++) {
    const u = `u${t}`
    add({ id: u, role: 'user', time: { created: 1_700_000_000_000 + t * 60_000 }, parts: [{ type: 'text', id: `${u}.t`, text: `Step ${t}: look at module ${t % 97} and fix what fails (ticket CF-${1000 + t}).` }] })
    if (t % 20 === 10) lastTail = u
    add({
      id: `a${t}`,
      role: 'assistant',
      finish: 'tool-calls',
      time: { created: 1_700_000_000_000 + t * 60_000 + 30_000 },
      tokens: { input: 20_000 + (t % 98) * 1_500, output: 300 },
      parts: [
        { type: 'text', id: `a${t}.t`, text: `Reading src/module-${t % 97}.ts.` },
        { type: 'tool', id: `a${t}.c`, callID: `call-${t}`, tool: 'read', state: { status: 'completed', input: { path: `src/module-${t % 97}.ts` }, output: `export const value${t} = ${t}\n`.repeat(40) } },
      ],
    })
    // Every 98 turns a compaction keeping the last few turns.
    if (t % 98 === 97 && lastTail) {
      add({ id: `cmp${t}`, role: 'user', parts: [{ type: 'compaction', id: `cmp${t}.c`, auto: true, overflow: true, tailStartID: lastTail }] })
      add({ id: `sum${t}`, role: 'assistant', summary: true, finish: 'stop', parentID: `cmp${t}`, parts: [{ type: 'text', id: `sum${t}.t`, text: `## Goal\n- Fix the failing modules\n## Progress\n- Done up to step ${t}` }] })
    }
  }
  writeFileSync(file, `${lines.join('\n')}\n`)
  return n
}

const dir = mkdtempSync(join(tmpdir(), 'cf-bench-view-'))
const sessions = [
  { name: 'claude-code/hive-extracted-02ed589a-5compactions.jsonl (largest corpus session)', input: join(root, '..', 'shared', 'corpus', 'claude-code', 'hive-extracted-02ed589a-5compactions.jsonl') },
  { name: 'generated: 10,000 messages, 50 compactions', input: join(dir, 'generated.jsonl'), make: generated },
]
const context = await chromium.launchPersistentContext(join(dir, 'profile'), { executablePath: '/usr/bin/chromium', headless: true, args: FLAGS })
const results = []
try {
  for (const s of sessions) {
    const count = s.make?.(s.input)
    const out = join(dir, 'page.html')
    const t0 = now()
    const run = spawnSync(process.execPath, [CLI, 'view', s.input, '--out', out, '--no-progress'], { encoding: 'utf8' })
    const cliMs = msSince(t0)
    if (run.status !== 0) throw new Error(`view failed: ${run.stderr}`)
    const bytes = statSync(out).size
    const load = []
    const search = []
    let messages = count
    let compactions
    for (let i = 0; i < runs; i++) {
      const page = await context.newPage()
      await page.goto(pathToFileURL(out).href)
      await page.waitForFunction('window.contextfoldReady === true')
      load.push(await page.evaluate('performance.now()'))
      const info = await page.evaluate("(() => { const d = JSON.parse(document.getElementById('cf-data').textContent); return [d.messages.length, d.compactions.length] })()")
      ;[messages, compactions] = info
      // From the end of the typing pause (120 ms) to the list redrawn with the matches.
      const t = await page.evaluate(`new Promise((resolve) => {
        const input = document.querySelector('#messages input[type=search]')
        const count = document.querySelector('#messages .count')
        let t0 = 0
        new MutationObserver(() => resolve(performance.now() - t0 - 120)).observe(count, { childList: true, characterData: true, subtree: true })
        input.value = 'module-42'
        t0 = performance.now()
        input.dispatchEvent(new Event('input'))
      })`)
      search.push(Math.max(0, t))
      await page.close()
    }
    const r = { session: s.name, messages, compactions, cliMs: Math.round(cliMs), pageMB: +(bytes / 2 ** 20).toFixed(1), loadMs: Math.round(median(load)), searchMs: Math.round(median(search)) }
    results.push(r)
    log(r)
  }
} finally {
  await context.close()
  rmSync(dir, { recursive: true, force: true })
}
console.log('| session | messages | compactions | `view --out` | page | load in chromium (median) | a search (median) |')
console.log('|---|---:|---:|---:|---:|---:|---:|')
for (const r of results) console.log(`| ${r.session} | ${r.messages} | ${r.compactions} | ${r.cliMs} ms | ${r.pageMB} MB | ${r.loadMs} ms | ${r.searchMs} ms |`)
