// What each entry point loads: `import 'contextfold'` resolves none of the integrations' peers
// (`ai`, `effect`, `@opencode-ai/*`), and `contextfold/opencode` takes only types from opencode's
// packages. A resolve hook (module.register) logs every bare specifier a child process resolves.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const dir = mkdtempSync(join(tmpdir(), 'contextfold-imports-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The bare specifiers (packages) resolved while importing `entry`, in order, without repeats. */
function packagesLoadedBy(entry: string): string[] {
  const log = join(dir, `${entry.replace(/\W/g, '_')}.log`)
  const hooks = join(dir, 'hooks.mjs')
  writeFileSync(log, '')
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs'
let log
export function initialize(data) { log = data.log }
export async function resolve(specifier, context, next) {
  if (!/^(\\.|\\/|node:|file:|data:)/.test(specifier)) appendFileSync(log, specifier + '\\n')
  return next(specifier, context)
}
`,
  )
  const script = `
import { register } from 'node:module'
import { readFileSync } from 'node:fs'
register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { log: ${JSON.stringify(log)} } })
await import(${JSON.stringify(entry)})
console.log(JSON.stringify(readFileSync(${JSON.stringify(log)}, 'utf8').split('\\n').filter(Boolean)))
`
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' })
  expect(r.status, r.stderr).toBe(0)
  return [...new Set(JSON.parse(r.stdout) as string[])]
}

const PEERS = /^(ai|effect|@opencode-ai\/.*)(\/|$)/

describe('what an import loads', () => {
  it("import 'contextfold' loads no peer of an integration", () => {
    const loaded = packagesLoadedBy('contextfold')
    expect(loaded).toContain('contextfold')
    expect(loaded.filter((p) => PEERS.test(p))).toEqual([])
  })

  it("import 'contextfold/opencode' loads nothing of opencode (its types only), nor ai or effect", () => {
    const loaded = packagesLoadedBy('contextfold/opencode')
    expect(loaded).toContain('contextfold/opencode')
    expect(loaded.filter((p) => PEERS.test(p))).toEqual([])
  })

  it("import 'contextfold/ai' loads no opencode package", () => {
    expect(packagesLoadedBy('contextfold/ai').filter((p) => p.startsWith('@opencode-ai/'))).toEqual([])
  })
})
