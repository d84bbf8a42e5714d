// The pi releases a benchmark runs side by side: 0.73.1 (`@mariozechner/pi-coding-agent`, a dev
// dependency) everywhere, and on Node 22+ also 0.87.1 (`@earendil-works/pi-coding-agent`, which
// needs Node 22), installed once from the npm registry into .cache/pi-0.87.1/ (scripts/install-pi.mjs).
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { PI_VERSION, installPi } from '../scripts/install-pi.mjs'

const loadNew = () => import(pathToFileURL(join(installPi(), 'node_modules', '@earendil-works', 'pi-coding-agent', 'dist', 'index.js')).href)

/** `[{ version, pi }]`, the newest first; `pi` is the package's module. */
export async function piVersions() {
  const out = []
  if (Number(process.versions.node.split('.')[0]) >= 22) out.push({ version: PI_VERSION, pi: await loadNew() })
  out.push({ version: '0.73.1', pi: await import('@mariozechner/pi-coding-agent') })
  return out
}
