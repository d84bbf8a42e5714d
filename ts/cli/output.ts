// Writing results: to stdout (a closed pipe ends the process quietly), or to a file, atomically
// (a temporary file renamed over the target), as JSON, JSON lines of messages, or a session store.
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'

import { createRequire } from 'node:module'

import type { Message, SessionOptions, SessionFile } from '../native.js'
import { outputError } from './errors.js'

/** How `--out` writes a session: `messages` (JSON lines, one message each) or a `store` file. */
export type OutFormat = 'messages' | 'store'
export const OUT_FORMATS: readonly OutFormat[] = ['messages', 'store']

let pipeClosed = false
/** Stops writing when the reader of stdout went away (`| head`): not an error. */
export function watchStdout(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') {
      pipeClosed = true
      return
    }
    throw e
  })
}

/** Writes `text` to stdout as it is. */
export function write(text: string): void {
  if (!pipeClosed) process.stdout.write(text)
}

/** Writes a line to stdout. */
export function print(text = ''): void {
  write(`${text}\n`)
}

export function printJson(value: unknown): void {
  print(JSON.stringify(value, null, 2))
}

/** The default `--out-format`: a session store. */
export const DEFAULT_OUT_FORMAT: OutFormat = 'store'

export function messagesJsonl(messages: readonly Message[]): string {
  let out = ''
  for (const m of messages) out += `${JSON.stringify(m)}\n`
  return out
}

function tempPath(file: string): string {
  return join(dirname(file), `.${basename(file)}.${process.pid}.tmp`)
}

/** Writes `data` to `file` through a temporary file, so a failure never leaves half a file. */
export function writeFileAtomic(file: string, data: string): void {
  const tmp = tempPath(file)
  try {
    writeFileSync(tmp, data)
    renameSync(tmp, file)
  } catch (e) {
    rmSync(tmp, { force: true })
    throw outputError(file, e)
  }
}

/**
 * Writes `messages` to `file` as `format`; returns how many were written. A store gets a fresh
 * file (any earlier file at `file` is replaced) with `options` in its header.
 */
export function writeSession(file: string, messages: readonly Message[], format: OutFormat, options: SessionOptions): number {
  if (format === 'messages') {
    writeFileAtomic(file, messagesJsonl(messages))
    return messages.length
  }
  // Required here, not imported: the error reporter loads this module before the addon may load.
  const native = createRequire(import.meta.url)('../../native.js') as typeof import('../../native.js')
  const tmp = tempPath(file)
  rmSync(tmp, { force: true })
  let store: SessionFile | undefined
  try {
    store = native.SessionFile.open(tmp, { create: true, durability: 'batch', session: options })
    for (const m of messages) store.append(m)
    store.close()
    store = undefined
    renameSync(tmp, file)
    return messages.length
  } catch (e) {
    try {
      store?.close()
    } catch {
      // already failing
    }
    rmSync(tmp, { force: true })
    throw outputError(file, e)
  } finally {
    // The writer lock's sidecar belongs to the temporary name.
    const lock = `${tmp}.lock`
    if (existsSync(lock)) rmSync(lock, { force: true })
  }
}
