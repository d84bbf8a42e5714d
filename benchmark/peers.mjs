// The pure-JS alternatives the benchmarks run beside contextfold (LangChain.js, Mastra), as
// published on npm. They need Node 22+ and stay out of the package's own install: the pinned
// versions in benchmark/peers/package.json are installed there on first use.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { log } from './timing.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const folder = join(here, 'peers')

/** Runs the calling script again on Node 24 (installed by scripts/with-node.mjs) when this Node is older than 22. */
export function onNode22(scriptUrl) {
  if (Number(process.versions.node.split('.')[0]) >= 22) return
  log(`LangChain.js and Mastra need Node 22+: running on Node 24`)
  const r = spawnSync(process.execPath, [join(here, '..', 'scripts', 'with-node.mjs'), '24', 'node', fileURLToPath(scriptUrl), ...process.argv.slice(2)], { stdio: 'inherit' })
  process.exit(r.status ?? 1)
}

/** LangChain.js and Mastra, installed into benchmark/peers on first use. */
export async function loadPeers() {
  if (!existsSync(join(folder, 'node_modules', '@mastra', 'core'))) {
    log('installing LangChain.js and Mastra into benchmark/peers ...')
    const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: folder, stdio: ['ignore', 'inherit', 'inherit'] })
    if (r.status !== 0) throw new Error('could not install benchmark/peers from the npm registry')
  }
  return import('./peers/index.mjs')
}
