// pi 0.87.1 (`@earendil-works/pi-coding-agent`, Node 22+), installed once from the npm registry into
// .cache/pi-0.87.1/ (ignored by git) for the Node 22 specs and the benchmarks that run it beside
// 0.73.1 (a dev dependency).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const PI_VERSION = '0.87.1'

/** The install's folder (`node_modules` inside), installing it first when missing. */
export function installPi() {
  const prefix = join(dirname(fileURLToPath(import.meta.url)), '..', '.cache', `pi-${PI_VERSION}`)
  const entry = join(prefix, 'node_modules', '@earendil-works', 'pi-coding-agent', 'dist', 'index.js')
  if (!existsSync(entry)) {
    mkdirSync(prefix, { recursive: true })
    const r = spawnSync(
      'npm',
      ['install', '--no-save', '--no-audit', '--no-fund', '--no-package-lock', '--prefix', prefix, `@earendil-works/pi-coding-agent@${PI_VERSION}`],
      { stdio: ['ignore', 'inherit', 'inherit'], shell: process.platform === 'win32', timeout: 300_000 },
    )
    if (r.status !== 0) throw new Error(`could not install @earendil-works/pi-coding-agent@${PI_VERSION} from the npm registry`)
  }
  return prefix
}
