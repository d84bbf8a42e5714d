// The real opencode (npm `opencode-ai`, a Bun-compiled binary) for the plugin's specs: installed once
// from the npm registry into .cache/ (kept between runs), run headless (`opencode run`) in a temp
// project whose HOME and XDG dirs are temp dirs too, against a fake OpenAI-compatible server.
import { spawn, spawnSync } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import type { Received } from './fake-openai.js'

export const OPENCODE_VERSION = '1.18.33'
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const CACHE = join(ROOT, '.cache', `opencode-${OPENCODE_VERSION}`)

/** The opencode binary for this machine, installed into the cache on first use. */
export function opencodeBinary(): string {
  const candidates = [`opencode-${process.platform}-${process.arch}`, `opencode-${process.platform}-${process.arch}-baseline`].map((p) =>
    join(CACHE, 'node_modules', p, 'bin', process.platform === 'win32' ? 'opencode.exe' : 'opencode'),
  )
  if (!candidates.some((c) => existsSync(c))) {
    mkdirSync(CACHE, { recursive: true })
    writeFileSync(join(CACHE, 'package.json'), '{ "private": true }\n')
    const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', `opencode-ai@${OPENCODE_VERSION}`], {
      cwd: CACHE,
      encoding: 'utf8',
    })
    if (r.status !== 0) throw new Error(`npm install opencode-ai@${OPENCODE_VERSION} failed:\n${r.stderr}`)
  }
  // The baseline build is for CPUs without AVX2 (what opencode's own postinstall picks between).
  for (const c of candidates) {
    if (existsSync(c) && spawnSync(c, ['--version'], { encoding: 'utf8' }).stdout?.trim() === OPENCODE_VERSION) return c
  }
  throw new Error(`no opencode ${OPENCODE_VERSION} binary runs here (looked for ${candidates.join(', ')})`)
}

export interface ProjectOptions {
  /** The plugin file put in `.opencode/plugins/` (none: opencode without contextfold). */
  plugin?: string
  /** The fake server's base URL. */
  baseURL: string
  /** The model's limits in the provider entry. */
  limit: { context: number; output: number }
  /** Files written into the project. */
  files?: Record<string, string>
  /** Packages of the clone's node_modules the project gets too (linked), for a plugin file that imports them. */
  links?: string[]
}

/** A temp project: opencode.json pointing at the fake server, contextfold linked as a dependency. */
export function makeProject(options: ProjectOptions): string {
  const dir = mkdtempSync(join(tmpdir(), 'contextfold-opencode-'))
  const project = join(dir, 'project')
  mkdirSync(join(project, 'node_modules'), { recursive: true })
  mkdirSync(join(dir, 'home'))
  symlinkSync(ROOT, join(project, 'node_modules', 'contextfold'), 'dir')
  for (const name of options.links ?? []) {
    mkdirSync(dirname(join(project, 'node_modules', name)), { recursive: true })
    symlinkSync(join(ROOT, 'node_modules', name), join(project, 'node_modules', name), 'dir')
  }
  const config = {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      local: {
        npm: '@ai-sdk/openai-compatible',
        options: { baseURL: options.baseURL, apiKey: 'test' },
        models: { 'fake-1': { limit: options.limit } },
      },
    },
    model: 'local/fake-1',
    small_model: 'local/fake-1',
    autoupdate: false,
    share: 'disabled',
  }
  writeFileSync(join(project, 'opencode.json'), JSON.stringify(config, null, 2))
  if (options.plugin !== undefined) {
    mkdirSync(join(project, '.opencode', 'plugins'), { recursive: true })
    writeFileSync(join(project, '.opencode', 'plugins', 'contextfold.ts'), options.plugin)
    // opencode installs its plugin package into .opencode/ when missing (a network install per project):
    // the clone's copy, at the same version, is what it would install.
    writeFileSync(join(project, '.opencode', 'package.json'), JSON.stringify({ dependencies: { '@opencode-ai/plugin': OPENCODE_VERSION } }))
    mkdirSync(join(project, '.opencode', 'node_modules', '@opencode-ai'), { recursive: true })
    symlinkSync(join(ROOT, 'node_modules', '@opencode-ai', 'plugin'), join(project, '.opencode', 'node_modules', '@opencode-ai', 'plugin'), 'dir')
  }
  for (const [name, text] of Object.entries(options.files ?? {})) {
    mkdirSync(dirname(join(project, name)), { recursive: true })
    writeFileSync(join(project, name), text)
  }
  return project
}

/** Removes a project made by `makeProject` (its temp dir, HOME included). */
export function removeProject(project: string): void {
  rmSync(dirname(project), { recursive: true, force: true })
}

export interface RunResult {
  code: number | null
  /** Standard output (read from `stdoutFile` when one was given). */
  stdout: string
  stderr: string
  /** The process was killed by `stopWhen` (or the guard timeout), not ended by itself. */
  killed: boolean
}

/** The environment of a run: temp HOME and XDG dirs, nothing of the caller's configuration or keys. */
function isolatedEnv(project: string, extra: Record<string, string>): Record<string, string> {
  const home = join(dirname(project), 'home')
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    TMPDIR: dirname(project),
    NO_COLOR: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    ...extra,
  }
}

/**
 * Runs opencode with `args` in `project` and waits for it to end. The process runs in its own
 * process group, which is killed when `stopWhen` says so, after `guardMs`, and in any case when
 * the run is over (so nothing it started outlives the call).
 */
export function runOpencode(
  project: string,
  args: string[],
  opts: { env?: Record<string, string>; onStart?: (pid: number) => void; stopWhen?: () => boolean; guardMs?: number; stdoutFile?: string } = {},
): Promise<RunResult> {
  // A large output written to a pipe is cut off when opencode exits; a file gets all of it.
  const out = opts.stdoutFile === undefined ? 'pipe' : openSync(opts.stdoutFile, 'w')
  const child = spawn(opencodeBinary(), args, { cwd: project, env: isolatedEnv(project, opts.env ?? {}), detached: true, stdio: ['ignore', out, 'pipe'] })
  if (typeof out === 'number') closeSync(out)
  opts.onStart?.(child.pid!)
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString('utf8')))
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')))
  let killed = false
  const killGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  const stop = () => {
    killed = true
    killGroup()
  }
  const guard = setTimeout(stop, opts.guardMs ?? 90_000)
  const poll = opts.stopWhen && setInterval(() => opts.stopWhen!() && stop(), 50)
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(guard)
      if (poll) clearInterval(poll)
      killGroup() // children it left (tool processes) go with it
      resolve({ code, stdout: opts.stdoutFile === undefined ? stdout : readFileSync(opts.stdoutFile, 'utf8'), stderr, killed })
    })
  })
}

/** The session a request belongs to (opencode sends its id as a header). */
export function sessionOf(r: Received): string | undefined {
  const h = r.headers['x-opencode-session-id'] ?? r.headers['x-session-affinity']
  return Array.isArray(h) ? h[0] : h
}

/** What kind of call opencode made: a compaction summary, or a step of the agent (runs pass `--title`, so no title call). */
export function kindOf(r: Received): 'compaction' | 'agent' {
  return r.system.includes('context summarization agent') ? 'compaction' : 'agent'
}

/** The text of a request's messages, flattened (content may be a string or parts). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((c) => (typeof c === 'string' ? c : ((c as { text?: string }).text ?? ''))).join('\n')
  return ''
}

/** The shared objects (`.node` files) a live process has mapped (Linux: /proc/<pid>/maps). */
export function mappedAddons(pid: number): string[] {
  const maps = readFileSync(`/proc/${pid}/maps`, 'utf8')
  return [...new Set(maps.split('\n').flatMap((l) => (l.trim().endsWith('.node') ? [l.trim().split(/\s+/).pop()!] : [])))]
}
