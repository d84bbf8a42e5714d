#!/usr/bin/env node
// `npm run pack:local -- DIR`: the two tarballs a release would publish for this machine, without
// publishing: the platform package (`contextfold-linux-x64-gnu` here, from npm/<platform>/ and the
// addon `npm install` built) and the main package as a release publishes it (scripts/stage-main.mjs:
// no lifecycle script), whose package.json gains `optionalDependencies` on every platform package in
// `napi.targets` at its own version, as `napi prepublish` writes them at release, and `packedLocally`:
// where its platform package is, which no registry has (the loader's advice when it is missing).
// Both are packed from copies in a temporary folder: nothing tracked changes. They are installed
// together: `npm install DIR/contextfold-<version>.tgz DIR/contextfold-<platform>-<version>.tgz`.
// Prints the two tarball paths as JSON: { "main": ..., "platform": ... }.
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

import { readNapiConfig } from '@napi-rs/cli'

import { root, run, stageMain } from './stage-main.mjs'

const dest = process.argv[2]
if (!dest) {
  console.error('usage: npm run pack:local -- <dir>')
  process.exit(2)
}
const out = resolve(dest)
mkdirSync(out, { recursive: true })

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

  const platform = pack(platformDir)

  // The main package as a release publishes it, with the optional dependencies napi prepublish writes.
  const mainDir = join(stage, 'main')
  const optionalDependencies = Object.fromEntries(targets.map((t) => [`${packageName}-${t.platformArchABI}`, pkg.version]))
  stageMain(mainDir, { optionalDependencies, packedLocally: { platformTarball: platform } })

  console.log(JSON.stringify({ main: pack(mainDir), platform }))
} finally {
  rmSync(stage, { recursive: true, force: true })
}
