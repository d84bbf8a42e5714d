// Which packages an import loads: a child Node process runs module code in steps under a resolve
// hook (module.register) that logs every bare specifier it resolves.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { expect } from 'vitest'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

const HOOKS = `import { appendFileSync } from 'node:fs'
let log
export function initialize(data) { log = data.log }
export async function resolve(specifier, context, next) {
  if (!/^(\\.|\\/|node:|file:|data:)/.test(specifier)) appendFileSync(log, specifier + '\\n')
  return next(specifier, context)
}
`

/**
 * Runs `steps` (top-level module code, one after the other, in one process: a step sees what the
 * earlier ones declared; a step that throws fails the call) and returns the packages each step
 * resolved, in order, without repeats.
 */
export function packagesResolvedBy(steps: string[]): string[][] {
  const dir = mkdtempSync(join(tmpdir(), 'contextfold-resolved-'))
  try {
    const log = join(dir, 'resolved.log')
    const hooks = join(dir, 'hooks.mjs')
    writeFileSync(log, '')
    writeFileSync(hooks, HOOKS)
    const read = `readFileSync(${JSON.stringify(log)}, 'utf8').split('\\n').filter(Boolean)`
    const script = [
      `import { register } from 'node:module'`,
      `import { readFileSync } from 'node:fs'`,
      `register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { log: ${JSON.stringify(log)} } })`,
      `const __marks = []`,
      ...steps.flatMap((step) => [step, `__marks.push(${read}.length)`]),
      `console.log(JSON.stringify({ lines: ${read}, marks: __marks }))`,
    ].join('\n')
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' })
    expect(r.status, r.stderr).toBe(0)
    const { lines, marks } = JSON.parse(r.stdout) as { lines: string[]; marks: number[] }
    return marks.map((end, i) => [...new Set(lines.slice(i === 0 ? 0 : marks[i - 1], end))])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
