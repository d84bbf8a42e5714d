// contextfold/pi in pi 0.87.1 (`@earendil-works/pi-coding-agent`, the newest that installs from the
// npm registry; it needs Node 22: `npm test` runs this folder on Node 24). It is installed once into
// .cache/pi-0.87.1/ (ignored by git) and loaded from there; the same extension runs unchanged.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

import { piSuite } from '../pi-agent.js'

const VERSION = '0.87.1'
const prefix = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '.cache', `pi-${VERSION}`)
const entry = join(prefix, 'node_modules', '@earendil-works', 'pi-coding-agent', 'dist', 'index.js')
if (!existsSync(entry)) {
  mkdirSync(prefix, { recursive: true })
  const r = spawnSync(
    'npm',
    ['install', '--no-save', '--no-audit', '--no-fund', '--no-package-lock', '--prefix', prefix, `@earendil-works/pi-coding-agent@${VERSION}`],
    { stdio: ['ignore', 'inherit', 'inherit'], shell: process.platform === 'win32', timeout: 300_000 },
  )
  if (r.status !== 0) throw new Error(`could not install @earendil-works/pi-coding-agent@${VERSION} from the npm registry`)
}
const pi = await import(pathToFileURL(entry).href)
const piAi = await import(pathToFileURL(join(prefix, 'node_modules', '@earendil-works', 'pi-ai', 'dist', 'index.js')).href)

piSuite({
  name: VERSION,
  pi,
  faux: piAi,
  reasons: true,
  async register(models, dir) {
    const handle = piAi.fauxProvider({ provider: 'faux', models })
    const modelRuntime = await pi.ModelRuntime.create({ authPath: join(dir, 'auth.json'), modelsPath: null, allowModelNetwork: false })
    modelRuntime.registerNativeProvider(handle.provider)
    await modelRuntime.setRuntimeApiKey('faux', 'dummy')
    return { handle, auth: { modelRuntime }, dispose: () => {} }
  },
})
