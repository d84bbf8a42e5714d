// contextfold/pi in pi 0.73.1 (`@mariozechner/pi-coding-agent`, a devDependency; Node 20 and later).
// (That importing contextfold/pi loads no pi package is checked in imports.spec.ts.)
import { join } from 'node:path'

import * as pi from '@mariozechner/pi-coding-agent'
import * as piAi from '@mariozechner/pi-ai'
import { piSuite } from './pi-agent.js'

piSuite({
  name: '0.73.1',
  pi,
  faux: piAi,
  reasons: false,
  cli: join(__dirname, '..', 'node_modules', '@mariozechner', 'pi-coding-agent', 'dist', 'cli.js'),
  async register(models) {
    const handle = piAi.registerFauxProvider({ provider: 'faux', models })
    const authStorage = pi.AuthStorage.inMemory()
    authStorage.setRuntimeApiKey('faux', 'dummy')
    return { handle, auth: { authStorage, modelRegistry: pi.ModelRegistry.inMemory(authStorage) }, dispose: () => handle.unregister() }
  },
})
