// The package as a user gets it, without publishing: `npm run pack:local` writes the platform
// package for this machine and the main package; a fresh project installs both tarballs with npm and
// with pnpm (from the npm registry, a dev dependency) and must give the same results as the clone.
// Then what a user sees when something is wrong: no binary for the platform (the main tarball alone,
// `--omit=optional`), a platform package of another version, a stray build beside the loader.
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string
  private?: boolean
  exports: Record<string, unknown>
  peerDependencies: Record<string, string>
  napi: { targets: string[] }
}
const PNPM = join(ROOT, 'node_modules', 'pnpm', 'bin', 'pnpm.cjs')
const EXAMPLE = join(ROOT, 'examples', 'pi-session.jsonl')
const PLATFORM_PACKAGE = 'contextfold-linux-x64-gnu'
const ADDON = 'contextfold.linux-x64-gnu.node'
const STACK_LINE = /^\s+at .+(:\d+:\d+\)?|\(native\)|<anonymous>\)?)$/m

let dir: string
let tarballs: { main: string; platform: string }

function run(cmd: string, args: string[], cwd: string, env: Record<string, string | undefined> = {}): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', ...env }, timeout: 300_000 })
}

function ok(cmd: string, args: string[], cwd: string, env: Record<string, string | undefined> = {}): string {
  const r = run(cmd, args, cwd, env)
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.status}:\n${r.stderr}\n${r.stdout}`)
  return r.stdout
}

/**
 * The peers (`effect`, `ai`) at the versions the clone's tests use, so every subpath can load. pi is
 * left out: `contextfold/pi` loads without it (pi hands the extension everything at run time); so is
 * Mastra: `contextfold/mastra` is typed structurally and loads none of it.
 */
function peers(): string[] {
  const loadsWithout = (name: string) => name.endsWith('/pi-coding-agent') || name.startsWith('@mastra/')
  return Object.keys(PKG.peerDependencies).filter((name) => !loadsWithout(name)).map((name) => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }
    return `${name}@${version}`
  })
}

/** A fresh project in the temp dir. */
function project(name: string): string {
  const app = join(dir, name)
  cpSync(EXAMPLE, join(app, 'pi-session.jsonl'))
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true }, null, 2))
  return app
}

// What the probe reports, run with `cwd` the project (or the clone, where 'contextfold' names the
// package itself): the exports of every subpath (ES modules and `require`), a Session round trip,
// exact counts, and which .node file the process loaded.
const PROBE = `
import { createRequire } from 'node:module'
const require = createRequire(process.cwd() + '/')
const subpaths = ${JSON.stringify(Object.keys(PKG.exports).filter((p) => p !== './package.json'))}
const exportsOf = {}
for (const p of subpaths) exportsOf[p] = Object.keys(await import('contextfold' + p.slice(1))).sort()
const cjs = require('contextfold')
const { Session, countTokens } = await import('contextfold')
const session = new Session({ model: { limit: { context: 10000, output: 1000 } }, tokenizer: 'o200k' })
session.append({ id: 'u1', role: 'user', parts: [{ id: 'u1.0', type: 'text', text: 'Read the README, please.' }] })
session.append({ id: 'a1', role: 'assistant', parts: [{ id: 'a1.0', type: 'tool', callID: 'c1', tool: 'read', state: { status: 'completed', input: { path: 'README.md' }, output: '# contextfold\\nContext compaction.' } }] })
const loaded = process.report.getReport().sharedObjects.filter((f) => f.endsWith('.node'))
console.log(JSON.stringify({
  exportsOf,
  cjs: Object.keys(cjs).sort(),
  usage: session.usage(),
  model: session.toModelMessages(),
  counts: [countTokens('héllo wörld, 123 tokens', 'o200k'), countTokens('héllo wörld, 123 tokens', 'cl100k')],
  loaded,
}))
`

function probe(cwd: string): { loaded: string[] } & Record<string, unknown> {
  return JSON.parse(ok(process.execPath, ['--input-type=module', '-e', PROBE], cwd)) as { loaded: string[] } & Record<string, unknown>
}

/** `inspect --json` of the example through the project's `npx contextfold`. */
function inspect(cwd: string, cli: string[]): unknown {
  return JSON.parse(ok(cli[0]!, [...cli.slice(1), 'inspect', 'pi-session.jsonl', '--json'], cwd))
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'contextfold-package-'))
  tarballs = JSON.parse(ok(process.execPath, [join(ROOT, 'scripts', 'pack-local.mjs'), join(dir, 'tarballs')], ROOT)) as typeof tarballs
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function entries(tarball: string): string[] {
  return execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).trim().split('\n')
}

function packedJson(tarball: string): Record<string, any> {
  return JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' })) as Record<string, any>
}

describe('npm run pack:local', () => {
  it('writes the main package with an optional dependency per target, at its version, and no install script', () => {
    const main = packedJson(tarballs.main)
    expect(main.version).toBe(PKG.version)
    const platforms = ['linux-x64-gnu', 'linux-arm64-gnu', 'darwin-x64', 'darwin-arm64', 'win32-x64-msvc']
    expect(PKG.napi.targets).toHaveLength(platforms.length)
    expect(main.optionalDependencies).toEqual(Object.fromEntries(platforms.map((p) => [`contextfold-${p}`, PKG.version])))
    // No script at all: the clone's build from source (`prepare`), and `private`, which keeps the clone from being published.
    expect(main.scripts).toBeUndefined()
    expect(main.private).toBeUndefined()
    expect(PKG.private).toBe(true)
    expect(main.packedLocally).toEqual({ platformTarball: tarballs.platform })
  })

  it('packs what a user needs and no test, benchmark, fuzz, target or source file', () => {
    const files = entries(tarballs.main).map((f) => f.replace(/^package\//, ''))
    for (const f of ['package.json', 'README.md', 'native.js', 'native.d.ts', 'binding.js', 'dist/index.js', 'dist/cli.js', 'dist/effect.js']) {
      expect(files, f).toContain(f)
    }
    const unwanted = files.filter((f) => /^(__test__|benchmark|fuzz|target|src|ts|scripts|examples|npm|proptest-regressions)\/|\.node$|^Cargo\.|\.rs$/.test(f))
    expect(unwanted).toEqual([])
  })

  it('writes the platform package with the addon, os, cpu and libc, at the same version', () => {
    expect(entries(tarballs.platform).map((f) => f.replace(/^package\//, '')).sort()).toEqual(['README.md', ADDON, 'package.json'])
    expect(packedJson(tarballs.platform)).toMatchObject({ name: PLATFORM_PACKAGE, version: PKG.version, os: ['linux'], cpu: ['x64'], libc: ['glibc'], main: ADDON })
  })

  it('keeps the platform package within 13 MB packed (the tokenizer tables ship reduced and compressed)', () => {
    expect(statSync(tarballs.platform).size).toBeLessThanOrEqual(13 * 1024 * 1024)
  })

  it('touches nothing tracked', () => {
    expect(execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', 'package.json', 'npm'], { cwd: ROOT, encoding: 'utf8' })).toBe('')
  })
})

describe.each([
  ['npm', (app: string) => run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarballs.main, tarballs.platform, ...peers()], app)],
  ['pnpm', (app: string) => run(process.execPath, [PNPM, 'add', '--store-dir', join(ROOT, '.cache', 'pnpm-store'), tarballs.main, tarballs.platform, ...peers()], app, { CI: undefined })],
])('installed with %s into a fresh project', (manager, install) => {
  let app: string
  let installed: SpawnSyncReturns<string>
  beforeAll(() => {
    app = project(`app-${manager}`)
    installed = install(app)
    if (installed.status !== 0) throw new Error(`${manager} install exited ${installed.status}:\n${installed.stderr}\n${installed.stdout}`)
  })

  it('installs without a word about contextfold: no script to run or to approve', () => {
    const said = `${installed.stdout}\n${installed.stderr}`.split('\n').filter((l) => /contextfold/i.test(l))
    // pnpm lists what it added by name; nothing else may name contextfold.
    expect(said.filter((l) => !/^\+ contextfold(-[a-z0-9-]+)? \d/.test(l.trim()))).toEqual([])
  })

  it('TypeScript finds every entry with module nodenext and with moduleResolution bundler, not with node10', () => {
    const entries = Object.keys(PKG.exports).filter((p) => p !== './package.json').map((p) => 'contextfold' + p.slice(1))
    writeFileSync(join(app, 'consumer.mts'), entries.map((e, i) => `import * as entry${i} from '${e}'\nexport { entry${i} }\n`).join('') + "import { Session } from 'contextfold'\nexport const s: Session = new Session({ model: { limit: { context: 1000 } } })\n")
    const tsc = (options: Record<string, string>) => {
      const config = { compilerOptions: { strict: true, noEmit: true, target: 'es2022', skipLibCheck: true, types: ['node'], typeRoots: [join(ROOT, 'node_modules', '@types')], ...options }, files: ['consumer.mts'] }
      writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(config))
      return run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], app)
    }
    for (const options of [{ module: 'nodenext' }, { module: 'esnext', moduleResolution: 'bundler' }, { module: 'preserve' }] as Record<string, string>[]) {
      const r = tsc(options)
      expect({ options, out: r.stdout, status: r.status }).toEqual({ options, out: '', status: 0 })
    }
    const node10 = tsc({ module: 'esnext', moduleResolution: 'node' })
    const unresolved = [...node10.stdout.matchAll(/Cannot find module '([^']+)'/g)].map((m) => m[1])
    // node10 reads files, not `exports`: it finds only `contextfold` (package.json's `types`).
    expect(unresolved.sort()).toEqual(entries.filter((e) => e !== 'contextfold').sort())
  })

  it('require, import, every subpath and a Session round trip give what the clone gives', () => {
    const installed = probe(app)
    const clone = probe(ROOT)
    expect({ ...installed, loaded: [] }).toEqual({ ...clone, loaded: [] })
    // The addon comes from the platform package, not from the clone.
    expect(installed.loaded).toHaveLength(1)
    expect(installed.loaded[0]).toContain(`${join('node_modules', PLATFORM_PACKAGE)}`)
    expect(installed.loaded[0]!.startsWith(app)).toBe(true)
    expect((installed.exportsOf as Record<string, string[]>)['./effect']!.length).toBeGreaterThan(0)
    // The pi extension loads with no pi installed: its default export and the configured factory.
    expect((installed.exportsOf as Record<string, string[]>)['./pi']).toEqual(expect.arrayContaining(['createPiExtension', 'default']))
  })

  it('npx contextfold --version and inspect on an example, as from the clone', () => {
    expect(ok('npx', ['--no-install', 'contextfold', '--version'], app).trim()).toBe(PKG.version)
    expect(inspect(app, ['npx', '--no-install', 'contextfold'])).toEqual(inspect(app, [process.execPath, join(ROOT, 'dist', 'cli.js')]))
  })
})

describe('failures a user can act on', () => {
  let app: string
  beforeAll(() => {
    app = project('app-no-binary')
    ok('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--omit=optional', tarballs.main], app)
  })

  it('no binary for the platform: require throws one coded error naming the platform, the targets and how to build', () => {
    expect(existsSync(join(app, 'node_modules', PLATFORM_PACKAGE))).toBe(false)
    const r = run(process.execPath, ['-e', "import('contextfold').catch((e) => console.log(JSON.stringify({ code: e.code, message: e.message })))"], app)
    const error = JSON.parse(r.stdout) as { code: string; message: string }
    expect(error.code).toBe('CF_NATIVE_MISSING')
    expect(error.message).toContain('linux-x64-gnu')
    expect(error.message).toContain(PLATFORM_PACKAGE)
    // Packed from the clone: the platform package is the other tarball, which no registry has.
    expect(error.message).toContain(`packed from a clone (npm run pack:local), so no registry has it: install it with contextfold, the two tarballs together (npm install <contextfold tarball> ${tarballs.platform})`)
    expect(error.message).not.toContain(`npm install ${PLATFORM_PACKAGE}@`)
    expect(error.message).toMatch(/build one from source/)
    expect(error.message).not.toContain('\n')
  })

  it('a published package without its platform package says how to install it from the registry', () => {
    const other = join(dir, 'app-published')
    cpSync(app, other, { recursive: true })
    const pkgPath = join(other, 'node_modules', 'contextfold', 'package.json')
    const { packedLocally: _, ...published } = JSON.parse(readFileSync(pkgPath, 'utf8')) as Record<string, unknown>
    writeFileSync(pkgPath, JSON.stringify(published))
    const r = run(process.execPath, ['-e', "import('contextfold').catch((e) => console.log(e.message))"], other)
    expect(r.stdout).toContain('--omit=optional')
    expect(r.stdout).toContain(`npm install ${PLATFORM_PACKAGE}@${PKG.version}`)
    expect(r.stdout).not.toContain('pack:local')
  })

  it('an app that treats contextfold as optional catches the error of every ES entry, and goes on', () => {
    for (const entry of ['contextfold', 'contextfold/ai', 'contextfold/pi', 'contextfold/opencode']) {
      const code = `try { await import('${entry}') } catch (e) { console.log(e.code) }\nconsole.log('went on')`
      const esm = run(process.execPath, ['--input-type=module', '-e', code], app)
      expect({ entry, stdout: esm.stdout, stderr: esm.stderr, status: esm.status }).toEqual({ entry, stdout: 'CF_NATIVE_MISSING\nwent on\n', stderr: '', status: 0 })
    }
  })

  it('an unsupported platform lists the targets there are binaries for', () => {
    // As on a platform no target covers: the loader reads its targets from package.json.
    const other = join(dir, 'app-unsupported')
    cpSync(app, other, { recursive: true })
    const pkgPath = join(other, 'node_modules', 'contextfold', 'package.json')
    const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { napi: { targets: string[] } }
    pkg.napi.targets = pkg.napi.targets.filter((t) => t !== 'x86_64-unknown-linux-gnu')
    writeFileSync(pkgPath, JSON.stringify(pkg))
    const r = run(process.execPath, ['-e', "import('contextfold').catch((e) => console.log(e.message))"], other)
    expect(r.stdout).toContain('contextfold has no native binary for linux-x64-gnu')
    expect(r.stdout).toContain('prebuilt binaries for linux-arm64-gnu, darwin-x64, darwin-arm64, win32-x64-msvc')
  })

  it('the CLI prints that message on one line and exits 1; CONTEXTFOLD_DEBUG=1 adds the stack', () => {
    const r = run('npx', ['--no-install', 'contextfold', 'inspect', 'pi-session.jsonl'], app)
    expect(r.status).toBe(1)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/^contextfold: contextfold has no native binary for linux-x64-gnu/)
    expect(r.stderr).toContain(tarballs.platform)
    expect(r.stderr).not.toMatch(STACK_LINE)
    const json = run('npx', ['--no-install', 'contextfold', 'inspect', 'pi-session.jsonl', '--json'], app)
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: 'CF_NATIVE_MISSING', exitCode: 1 } })
    const debug = run('npx', ['--no-install', 'contextfold', 'inspect', 'pi-session.jsonl'], app, { CONTEXTFOLD_DEBUG: '1' })
    expect(debug.status).toBe(1)
    expect(debug.stderr).toMatch(STACK_LINE)
  })
})

describe('the loader picks the platform package, checks its version, then a local build', () => {
  let app: string
  beforeAll(() => {
    app = project('app-loader')
    ok('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarballs.main, tarballs.platform], app)
  })

  const loaded = (cwd: string) =>
    run(process.execPath, ['-e', "import('contextfold').then(() => console.log(JSON.stringify(process.report.getReport().sharedObjects.filter((f) => f.endsWith('.node')))), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))"], cwd)

  it('a build beside the loader does not shadow the platform package', () => {
    const copy = join(dir, 'app-stray')
    cpSync(app, copy, { recursive: true })
    copyFileSync(join(ROOT, ADDON), join(copy, 'node_modules', 'contextfold', ADDON))
    const files = JSON.parse(loaded(copy).stdout) as string[]
    expect(files).toEqual([join(copy, 'node_modules', PLATFORM_PACKAGE, ADDON)])
  })

  it('a platform package of another version is reported and not loaded', () => {
    const copy = join(dir, 'app-stale')
    cpSync(app, copy, { recursive: true })
    const pkgPath = join(copy, 'node_modules', PLATFORM_PACKAGE, 'package.json')
    writeFileSync(pkgPath, JSON.stringify({ ...JSON.parse(readFileSync(pkgPath, 'utf8')), version: '0.0.1-stale' }))
    const error = JSON.parse(loaded(copy).stdout) as { code: string; message: string }
    expect(error.code).toBe('CF_NATIVE_VERSION')
    expect(error.message).toContain(`${PLATFORM_PACKAGE}@0.0.1-stale is installed, but contextfold ${PKG.version} needs ${PLATFORM_PACKAGE}@${PKG.version}`)
    // With a local build, that build loads, and the stale package is reported as a warning.
    copyFileSync(join(ROOT, ADDON), join(copy, 'node_modules', 'contextfold', ADDON))
    const r = loaded(copy)
    expect(JSON.parse(r.stdout)).toEqual([join(copy, 'node_modules', 'contextfold', ADDON)])
    expect(r.stderr).toContain('CF_NATIVE_VERSION')
    expect(r.stderr).toContain('0.0.1-stale')
  })
})
