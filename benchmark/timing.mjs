// Small timing helpers: hrtime in milliseconds, medians, and a JSON channel for child processes.
import { setTimeout as sleep } from 'node:timers/promises'
import { pathToFileURL } from 'node:url'
import v8 from 'node:v8'
import vm from 'node:vm'

export const now = () => process.hrtime.bigint()
export const msSince = (t0) => Number(process.hrtime.bigint() - t0) / 1e6

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** Progress goes to stderr so stdout stays a clean JSON result for the orchestrator. */
export const log = (...args) => console.error(...args)

/** True when this module is the script node was started with (so it may also be imported). */
export const isMain = (url) => Boolean(process.argv[1]) && url === pathToFileURL(process.argv[1]).href

/** Median ms of `rounds` calls of `fn`, after one warm-up call. */
export function timeMedian(fn, rounds) {
  fn()
  const ms = []
  for (let i = 0; i < rounds; i++) {
    const t0 = now()
    fn()
    ms.push(msSince(t0))
  }
  return median(ms)
}

v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc')

/**
 * Before a timed run: a full collection, a turn of the event loop (Node runs the finalizers it
 * queued: native sessions, external strings), another collection, then a pause while V8's
 * helper threads finish sweeping what it freed. Without the pause that sweeping runs during the
 * timed call and, on 2 cores, takes a core from it: a 3 ms load measured 6–7 ms beside a 100 MB
 * heap. No run pays for the garbage of the one before, as in an agent, which awaits between calls.
 */
export async function settle() {
  gc()
  await new Promise((resolve) => setImmediate(resolve))
  gc()
  await sleep(50)
}

/** Median ms of `rounds` calls of `fn`, each after `settle()`, after one warm-up call. */
export async function timeSettled(fn, rounds) {
  fn()
  const ms = []
  for (let i = 0; i < rounds; i++) {
    await settle()
    const t0 = now()
    fn()
    ms.push(msSince(t0))
  }
  return median(ms)
}

/**
 * Median ms of a model call through `make()` as a conversation grows by `more(i)` a call, from
 * `msgs`; each call gets its own copy of the array (a host may edit what it is given), made
 * before the clock starts. At most `calls` calls, fewer once `budgetMs` is spent (at least 5).
 */
export async function perCall({ msgs, more }, make, calls, budgetMs) {
  const run = make()
  let prompt = msgs
  await run([...prompt]) // the first call takes the whole conversation in
  const ms = []
  const started = now()
  for (let i = 0; i < calls && (i < 5 || msSince(started) < budgetMs); i++) {
    prompt = [...prompt, ...more(i)]
    const fresh = [...prompt]
    const t0 = now()
    await run(fresh)
    ms.push(msSince(t0))
  }
  return { ms: median(ms), calls: ms.length }
}

/**
 * Runs each contender (`name -> make`) at each of three `sizes` (`grow(n)` gives the conversation)
 * and prints the Markdown table: each row's largest / smallest ratio, and its ratio to `ours` at
 * the largest size.
 */
export async function perCallTable(contenders, sizes, grow, { calls, budgetMs, ours }) {
  const rows = []
  for (const [name, make] of Object.entries(contenders)) {
    const cells = []
    for (const n of sizes) {
      log(`${name} at ${n} messages...`)
      cells.push(await perCall(grow(n), make, calls, budgetMs))
    }
    rows.push([name, ...cells])
  }
  const cf = rows.find(([name]) => name === ours)
  const last = sizes.length
  console.log(`| per model call (median of up to ${calls}, 2 new messages each) | ${sizes.map((n) => `${n.toLocaleString('en')} msgs`).join(' | ')} | ${sizes.at(-1).toLocaleString('en')} / ${sizes[0]} | vs contextfold at ${sizes.at(-1).toLocaleString('en')} |`)
  console.log(`|---|${sizes.map(() => '---').join('|')}|---|---|`)
  const cell = ({ ms, calls: n }) => `${ms.toFixed(3)} ms${n < calls ? ` (${n} calls)` : ''}`
  for (const [name, ...r] of rows) console.log(`| ${name} | ${r.map(cell).join(' | ')} | ${(r[last - 1].ms / r[0].ms).toFixed(2)}× | ${(r[last - 1].ms / cf[last].ms).toFixed(2)}× |`)
}
