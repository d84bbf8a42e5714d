#!/usr/bin/env node
// The main package as it is published, staged in a folder: the files `npm pack` takes from the clone,
// and a package.json without the clone's `scripts` (they build from source and bump the platform
// packages, with files the package does not carry: left in, `prepare` makes every install warn) and
// without `private` (which keeps the clone itself from being published). `npm run pack:local` packs
// it; a release publishes it (`node scripts/stage-main.mjs DIR` once `napi prepublish` has written the
// `optionalDependencies` into package.json, then `npm publish DIR`: see .github/workflows/release.yml).
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** `cmd args` in `cwd`; its stdout, or the process exits naming the command. */
export function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], shell: process.platform === 'win32' })
  if (r.status !== 0) {
    console.error(`contextfold: \`${cmd} ${args.join(' ')}\` failed in ${cwd}`)
    process.exit(1)
  }
  return r.stdout
}

/** The published manifest of the clone's `pkg`, with `extra` fields. */
export function publishedManifest(pkg, extra = {}) {
  const { scripts: _scripts, private: _private, ...published } = pkg
  return { ...published, ...extra }
}

/** Copies what `npm pack` takes from the clone into `dir`, with the published manifest (`extra` added). */
export function stageMain(dir, extra = {}) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const [listing] = JSON.parse(run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], root))
  for (const { path } of listing.files) cpSync(join(root, path), join(dir, path), { recursive: true })
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(publishedManifest(pkg, extra), null, 2)}\n`)
  return pkg
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dest = process.argv[2]
  if (!dest) {
    console.error('usage: node scripts/stage-main.mjs <dir>')
    process.exit(2)
  }
  mkdirSync(resolve(dest), { recursive: true })
  stageMain(resolve(dest))
}
