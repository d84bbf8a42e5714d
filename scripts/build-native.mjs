#!/usr/bin/env node
// Builds the native addon from source (release) when the .node file is missing or older than the
// Rust sources. `--force` always builds. Used by `npm install` in a clone (the `prepare` script) and
// `npm run build`. napi-rs writes the addon (`contextfold.<platform>.node`), its generated loader
// (`binding.js`) and the generated types (`native.d.ts`); `native.js` is the entry that loads them.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const force = process.argv.includes('--force')

function newest(path) {
  const st = statSync(path)
  if (!st.isDirectory()) return st.mtimeMs
  return Math.max(0, ...readdirSync(path).map((f) => newest(join(path, f))))
}

// `npm pack` / `npm publish` of the main package: it carries no binary (the platform packages in
// npm/ do), so there is nothing to build for it.
if (['pack', 'publish'].includes(process.env.npm_command ?? '')) process.exit(0)

const sources = ['src', 'Cargo.toml', 'Cargo.lock', 'build.rs'].map((f) => join(root, f)).filter(existsSync)
const binaries = readdirSync(root).filter((f) => /^contextfold\..*\.node$/.test(f))
const built = binaries.length ? Math.min(...binaries.map((f) => statSync(join(root, f)).mtimeMs)) : 0
if (!force && built > Math.max(...sources.map(newest))) {
  console.log('contextfold: native addon is up to date')
  process.exit(0)
}

const cargo = spawnSync('cargo', ['--version'], { encoding: 'utf8' })
if (cargo.error || cargo.status !== 0) {
  console.error(
    'contextfold: building the native addon needs a Rust toolchain (cargo was not found on PATH).\n' +
      'Install it from https://rustup.rs and run `npm install` again.',
  )
  process.exit(1)
}

console.log(`contextfold: building the native addon (${cargo.stdout.trim()}, release)...`)
const napi = join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js')
const result = spawnSync(process.execPath, [napi, 'build', '--platform', '--release', '--js', 'binding.js', '--dts', 'native.d.ts'], {
  cwd: root,
  stdio: 'inherit',
})
process.exit(result.status ?? 1)
