#!/usr/bin/env node
// Runs a command under another Node major: `node scripts/with-node.mjs 24 npx vitest run`.
// The binary comes from the npm registry's `node-<platform>-<arch>` package, installed once into
// .cache/node-<major>/ (ignored by git), and its folder goes first on PATH for the command and
// everything it starts (npm, npx and vitest then run on that Node).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const [major, cmd, ...args] = process.argv.slice(2)
if (!/^\d+$/.test(major ?? '') || !cmd) {
  console.error('usage: node scripts/with-node.mjs <major> <command> [args...]')
  process.exit(2)
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const pkg = `node-${process.platform}-${process.arch}`
const prefix = join(root, '.cache', `node-${major}`)
const bin = join(prefix, 'node_modules', pkg, 'bin')
const exe = join(bin, process.platform === 'win32' ? 'node.exe' : 'node')

if (!existsSync(exe)) {
  mkdirSync(prefix, { recursive: true })
  console.error(`with-node: installing ${pkg}@${major} into ${prefix}`)
  const r = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--no-package-lock', '--prefix', prefix, `${pkg}@${major}`], {
    stdio: ['ignore', 'inherit', 'inherit'],
    shell: process.platform === 'win32',
  })
  if (r.status !== 0 || !existsSync(exe)) {
    console.error(`with-node: could not install ${pkg}@${major} from the npm registry`)
    process.exit(1)
  }
}

const env = { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` }
const r = spawnSync(cmd, args, { stdio: 'inherit', env, shell: process.platform === 'win32' })
if (r.error) {
  console.error(`with-node: ${cmd}: ${r.error.message}`)
  process.exit(1)
}
process.exit(r.status ?? 1)
