// The pi releases a benchmark runs side by side: 0.73.1 (`@mariozechner/pi-coding-agent`, a dev
// dependency) everywhere, and on Node 22+ also 0.87.1 (`@earendil-works/pi-coding-agent`, which
// needs Node 22), installed once from the npm registry into .cache/pi-0.87.1/ (ignored by git), as
// __test__/node22/pi-087.spec.ts does.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const NEW = '0.87.1'
const root = join(dirname(fileURLToPath(import.meta.url)), '..')

async function loadNew() {
  const prefix = join(root, '.cache', `pi-${NEW}`)
  const entry = join(prefix, 'node_modules', '@earendil-works', 'pi-coding-agent', 'dist', 'index.js')
  if (!existsSync(entry)) {
    mkdirSync(prefix, { recursive: true })
    const r = spawnSync(
      'npm',
      ['install', '--no-save', '--no-audit', '--no-fund', '--no-package-lock', '--prefix', prefix, `@earendil-works/pi-coding-agent@${NEW}`],
      { stdio: ['ignore', 'inherit', 'inherit'], shell: process.platform === 'win32', timeout: 300_000 },
    )
    if (r.status !== 0) throw new Error(`could not install @earendil-works/pi-coding-agent@${NEW} from the npm registry`)
  }
  return import(pathToFileURL(entry).href)
}

/** `[{ version, pi }]`, the newest first; `pi` is the package's module. */
export async function piVersions() {
  const out = []
  if (Number(process.versions.node.split('.')[0]) >= 22) out.push({ version: NEW, pi: await loadNew() })
  out.push({ version: '0.73.1', pi: await import('@mariozechner/pi-coding-agent') })
  return out
}
