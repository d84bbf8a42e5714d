// contextfold/pi in pi 0.73.1 (`@mariozechner/pi-coding-agent`, a devDependency; Node 20 and later).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

import * as pi from '@mariozechner/pi-coding-agent'
import * as piAi from '@mariozechner/pi-ai'
import { describe, expect, it } from 'vitest'

import { piSuite } from './pi-agent.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

piSuite({
  name: '0.73.1',
  pi,
  faux: piAi,
  reasons: false,
  async register(models) {
    const handle = piAi.registerFauxProvider({ provider: 'faux', models })
    const authStorage = pi.AuthStorage.inMemory()
    authStorage.setRuntimeApiKey('faux', 'dummy')
    return { handle, auth: { authStorage, modelRegistry: pi.ModelRegistry.inMemory(authStorage) }, dispose: () => handle.unregister() }
  },
})

describe('loading', () => {
  it('importing contextfold or contextfold/pi loads no pi package', () => {
    // A resolve hook (module.register) logs every specifier naming a pi package.
    const dir = mkdtempSync(join(tmpdir(), 'contextfold-pi-lazy-'))
    try {
      const log = join(dir, 'resolved.log')
      const hooks = join(dir, 'hooks.mjs')
      writeFileSync(log, '')
      writeFileSync(
        hooks,
        `import { appendFileSync } from 'node:fs'
let log
export function initialize(data) { log = data.log }
export async function resolve(specifier, context, next) {
  if (/pi-(coding-agent|ai|agent-core|tui)/.test(specifier)) appendFileSync(log, specifier + '\\n')
  return next(specifier, context)
}
`,
      )
      const script = `
import { register } from 'node:module'
import { readFileSync } from 'node:fs'
register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { log: ${JSON.stringify(log)} } })
const root = await import('contextfold')
const pi = await import('contextfold/pi')
console.log(JSON.stringify({ log: readFileSync(${JSON.stringify(log)}, 'utf8'), root: typeof root.Session, pi: typeof pi.default }))
`
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' })
      expect(r.status, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout)).toEqual({ log: '', root: 'function', pi: 'function' })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
