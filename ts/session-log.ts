// A session's log in a store, as the integrations use it: opened for one call of a conversation,
// written with what the call changed, closed. The file store (`SessionFile`) is one; the database
// stores of `contextfold/postgres` and `contextfold/redis` are others, and an app may bring its own.
import { join } from 'node:path'

import { SessionFile } from './native.js'
import type { Message, PruneRecord, Session, SessionOptions, StoreOptions } from './native.js'
import { InvalidArgumentError } from './errors.js'

/**
 * One session's log, open for writing (a single writer at a time). Each member may return a
 * promise. `SessionFile` (files), `PostgresSession` and `RedisSession` fit it.
 */
export interface SessionLog {
  append(message: Message): unknown
  update(message: Message): unknown
  prune(result: PruneRecord): unknown
  /** The session as its context needs it (tail-first: from the latest compaction on). */
  load(options?: SessionOptions): Session | Promise<Session>
  /** Releases the writer lock. */
  close(): unknown
}

/**
 * A store of many sessions: opens the log of session `id` for writing, creating it when missing.
 * `fileStore(dir)`, `postgresStore(...)` (`contextfold/postgres`) and `redisStore(...)`
 * (`contextfold/redis`) make one. A log that another writer holds is an error with code
 * `CF_SESSION_LOCKED`: the integrations wait and retry.
 */
export type SessionStore = (id: string) => SessionLog | Promise<SessionLog>

/** Ids a file name can hold as they are: letters, digits, `-`, `_`, `.` (not first), at most 200. */
const FILE_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/

/**
 * The file store: session files in `dir`, one per id (`<dir>/<id>.jsonl`; the folder and the file
 * are created when missing), for the integrations' `store` option on one machine.
 *
 * @example
 * wrapLanguageModel({ model, middleware: contextfoldMiddleware({ store: fileStore('.sessions') }) })
 */
export function fileStore(dir: string, options: Omit<StoreOptions, 'readOnly'> = {}): SessionStore {
  return (id) => {
    if (!FILE_ID.test(id)) {
      throw new InvalidArgumentError(
        `session id ${JSON.stringify(id).slice(0, 80)} cannot name a file: use letters, digits, '-', '_' and '.' (not first), at most 200`,
      )
    }
    return SessionFile.openAsync(join(dir, `${id}.jsonl`), { create: true, ...options })
  }
}

/** How long `openLog` waits for another writer of the session before giving up. */
export const LOCK_WAIT_MS = 30_000

/**
 * `open(id)`, waiting (with backoff, up to `LOCK_WAIT_MS`) while another writer holds the session:
 * calls of one conversation served by several processes take turns.
 */
export async function openLog(open: SessionStore, id: string, signal?: AbortSignal): Promise<SessionLog> {
  const started = Date.now()
  for (let wait = 5; ; wait = Math.min(wait * 2, 250)) {
    try {
      return await open(id)
    } catch (e) {
      if ((e as { code?: unknown })?.code !== 'CF_SESSION_LOCKED' || Date.now() - started + wait > LOCK_WAIT_MS) throw e
    }
    signal?.throwIfAborted()
    await new Promise((resolve) => setTimeout(resolve, wait + Math.random() * wait))
  }
}
