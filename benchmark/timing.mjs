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
