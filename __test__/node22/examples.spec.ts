// The AI SDK guide's example (docs/guides/ai-sdk.md) runs as a user runs it: `node examples/ai-sdk-agent.mts` (Node 22.18+
// runs TypeScript), reading ~600k tokens of files through a 32k window.
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

it('examples/ai-sdk-agent.mts finishes its 31-step loop', () => {
  const r = spawnSync(process.execPath, [join(ROOT, 'examples', 'ai-sdk-agent.mts')], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 })
  expect(r.stderr.replace(/.*ExperimentalWarning.*\n?|.*--trace-warnings.*\n?/g, '')).toBe('')
  expect(r.status).toBe(0)
  expect(r.stdout.trim()).toBe('Read 30 modules. (31 steps)')
})
