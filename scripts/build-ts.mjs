#!/usr/bin/env node
// Builds the TypeScript layer (ts/ -> dist/) with the project's `tsc`, then marks dist/ as ES modules
// (the package root stays CommonJS for the native loader `native.js`). Used by `npm install` in a
// clone (the `prepare` script) and `npm run build:ts`.
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
if (!existsSync(tsc)) {
  console.error('contextfold: building dist/ needs the `typescript` dev dependency (run `npm install`).')
  process.exit(1)
}
const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { cwd: root, stdio: 'inherit' })
if (result.status !== 0) process.exit(result.status ?? 1)

mkdirSync(join(root, 'dist'), { recursive: true })
writeFileSync(join(root, 'dist', 'package.json'), '{\n  "type": "module"\n}\n')
// The CLI (`bin` in package.json): tsc keeps its `#!/usr/bin/env node` line; make it executable.
if (existsSync(join(root, 'dist', 'cli.js'))) chmodSync(join(root, 'dist', 'cli.js'), 0o755)
