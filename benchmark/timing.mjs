// Small timing helpers: hrtime in milliseconds, medians, and a JSON channel for child processes.
import { pathToFileURL } from 'node:url'

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
