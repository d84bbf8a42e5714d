// The built CLI (`node dist/cli.js ...`) as a child process, for the specs that drive it.
import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
export const CLI = join(ROOT, 'dist', 'cli.js')

export interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs the built CLI; never through a shell. Colours off, no API keys from the environment. */
export function cli(args: string[], opts: { env?: Record<string, string>; input?: string } = {}): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' }
  for (const k of ['FORCE_COLOR', 'CONTEXTFOLD_API_KEY', 'OPENAI_API_KEY', 'CI']) delete env[k]
  Object.assign(env, opts.env)
  if (opts.env?.FORCE_COLOR) delete env.NO_COLOR
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(opts.input ?? '')
  })
}
