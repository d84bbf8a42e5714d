#!/usr/bin/env node
// `npm run pack:local -- DIR`: the two tarballs a release would publish for this machine, without
// publishing: the platform package (`contextfold-linux-x64-gnu` here, from npm/<platform>/ and the
// addon `npm install` built) and the main package, whose package.json gains `optionalDependencies`
// on every platform package in `napi.targets` at its own version, as `napi prepublish` writes them
// at release. Both are packed from copies in a temporary folder: nothing tracked changes.
// Prints the two tarball paths as JSON: { "main": ..., "platform": ... }.
import { spawnSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { readNapiConfig } from '@napi-rs/cli'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const dest = process.argv[2]
if (!dest) {
  console.error('usage: npm run pack:local -- <dir>')
  process.exit(2)
}
const out = resolve(dest)
mkdirSync(out, { recursive: true })

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], shell: process.platform === 'win32' })
  if (r.status !== 0) {
    console.error(`pack:local: \`${cmd} ${args.join(' ')}\` failed in ${cwd}`)
    process.exit(1)
  }
  return r.stdout
}

/** `npm pack` of `dir` into `out`; the tarball's path. Scripts are not run: everything is built. */
function pack(dir) {
  const [info] = JSON.parse(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], dir))
  return join(out, info.filename)
}

// The addon and dist/, built from source if they are not up to date.
for (const script of ['build-native.mjs', 'build-ts.mjs']) run(process.execPath, [join(root, 'scripts', script)], root)

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const { targets, packageName, binaryName } = await readNapiConfig(join(root, 'package.json'))
const libc = process.platform === 'linux' ? (process.report.getReport().header.glibcVersionRuntime ? 'gnu' : 'musl') : undefined
const host = targets.find((t) => t.platform === process.platform && t.arch === process.arch && (libc === undefined || t.abi === libc))
if (!host) {
  console.error(`pack:local: ${process.platform}-${process.arch} is not in napi.targets (${targets.map((t) => t.platformArchABI).join(', ')})`)
  process.exit(1)
}
const addon = `${binaryName}.${host.platformArchABI}.node`
if (!existsSync(join(root, addon))) {
  console.error(`pack:local: ${addon} was not built`)
  process.exit(1)
}

const stage = mkdtempSync(join(tmpdir(), 'contextfold-pack-'))
try {
  const platformDir = join(stage, 'platform')
  cpSync(join(root, 'npm', host.platformArchABI), platformDir, { recursive: true })
  copyFileSync(join(root, addon), join(platformDir, addon))

  // The main package: what `npm pack` would take from the clone, with the release's package.json.
  const mainDir = join(stage, 'main')
  const [listing] = JSON.parse(run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], root))
  for (const { path } of listing.files) cpSync(join(root, path), join(mainDir, path), { recursive: true })
  const optionalDependencies = Object.fromEntries(targets.map((t) => [`${packageName}-${t.platformArchABI}`, pkg.version]))
  writeFileSync(join(mainDir, 'package.json'), `${JSON.stringify({ ...pkg, optionalDependencies }, null, 2)}\n`)

  console.log(JSON.stringify({ main: pack(mainDir), platform: pack(platformDir) }))
} finally {
  rmSync(stage, { recursive: true, force: true })
}
