// contextfold/pi in pi 0.87.1 (`@earendil-works/pi-coding-agent`, the newest that installs from the
// npm registry; it needs Node 22: `npm test` runs this folder on Node 24). It is installed once into
// .cache/pi-0.87.1/ (ignored by git) and loaded from there; the same extension runs unchanged.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

import { PI_VERSION as VERSION, installPi } from '../../scripts/install-pi.mjs'
import { piSuite } from '../pi-agent.js'

const prefix = installPi()
const entry = join(prefix, 'node_modules', '@earendil-works', 'pi-coding-agent', 'dist', 'index.js')
const pi = await import(pathToFileURL(entry).href)
const piAi = await import(pathToFileURL(join(prefix, 'node_modules', '@earendil-works', 'pi-ai', 'dist', 'index.js')).href)

piSuite({
  name: VERSION,
  pi,
  faux: piAi,
  reasons: true,
  cli: join(prefix, 'node_modules', '@earendil-works', 'pi-coding-agent', 'dist', 'cli.js'),
  async register(models, dir) {
    const handle = piAi.fauxProvider({ provider: 'faux', models })
    const modelRuntime = await pi.ModelRuntime.create({ authPath: join(dir, 'auth.json'), modelsPath: null, allowModelNetwork: false })
    modelRuntime.registerNativeProvider(handle.provider)
    await modelRuntime.setRuntimeApiKey('faux', 'dummy')
    return { handle, auth: { modelRuntime }, dispose: () => {} }
  },
})
