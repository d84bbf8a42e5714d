// What the loop specs share: temporary folders and child processes, removed and killed after
// each test, and the extractive summarizer counting its calls.
import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterEach } from 'vitest'

import { extractiveSummarizer, type Summarizer } from '../dist/index.js'

/** What `scratch` gives a spec. */
export interface Scratch {
  /** A new folder, named from the prefix, removed after the test. */
  tempDir: () => string
  /** Child processes killed after the test. */
  children: ChildProcess[]
  /** Forks the worker `script` (beside this file) with `args`; resolves once it says it is ready. */
  worker: (script: string, args: string[]) => Promise<ChildProcess>
}

/** Sends `message` to a worker and resolves with its answer. */
export function ask(child: ChildProcess, message: unknown): Promise<any> {
  return new Promise((resolve) => {
    child.once('message', resolve)
    child.send(message as object)
  })
}

export function scratch(prefix: string): Scratch {
  const dirs: string[] = []
  const children: ChildProcess[] = []
  afterEach(() => {
    for (const c of children.splice(0)) c.kill('SIGKILL')
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
  })
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), prefix))
    dirs.push(d)
    return d
  }
  const worker = (script: string, args: string[]) => {
    const child = fork(join(import.meta.dirname, script), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    children.push(child)
    return new Promise<ChildProcess>((resolve, reject) => {
      child.once('message', () => resolve(child))
      child.once('exit', (code) => reject(new Error(`worker exited with ${code}`)))
    })
  }
  return { tempDir, children, worker }
}

/** The extractive summarizer, and how many summaries it wrote. */
export function countingSummarizer(): { summarizer: Summarizer; calls: () => number } {
  const inner = extractiveSummarizer()
  let n = 0
  return { summarizer: async (req, signal) => (n++, inner(req, signal)), calls: () => n }
}
