// The three session stores behind one helper, for the conformance spec, the AI SDK store spec, the
// benchmark and the soak script: `file` (a directory), `postgres` and `redis` (a URL).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { SessionFile, fileStore } from '../dist/index.js'
import { PostgresSession } from '../dist/postgres/index.js'
import { RedisSession } from '../dist/redis/index.js'
import { startPostgres, startRedis } from './servers.mjs'

export const BACKENDS = ['file', 'postgres', 'redis']

/** A short lease for Redis writers in tests (a killed writer blocks the next for at most this). */
export const TEST_LEASE_MS = 1_500

/**
 * Opens session `id` of `backend` at `target` (a directory, or a server URL). `options`: the
 * stores' open options (`create`, `readOnly`, `session`).
 */
export function openStore(backend, target, id, options = {}) {
  if (backend === 'file') return SessionFile.openAsync(join(target, `${id}.jsonl`), options)
  if (backend === 'postgres') return PostgresSession.open({ connectionString: target, poolConfig: { max: 2 }, id, ...options })
  if (backend === 'redis') return RedisSession.open({ url: target, leaseMs: TEST_LEASE_MS, id, ...options })
  throw new Error(`unknown backend ${backend}`)
}

/** The sessions of `backend` at `target` as an `SessionStore` (the AI SDK middleware's `store`). */
export function sessionsOf(backend, target) {
  if (backend === 'file') return fileStore(target)
  if (backend === 'postgres') return PostgresSession.sessions({ connectionString: target })
  if (backend === 'redis') return RedisSession.sessions({ url: target, leaseMs: TEST_LEASE_MS })
  throw new Error(`unknown backend ${backend}`)
}

/**
 * Starts what `backend` needs (a temp directory, or a real server with the schema set up):
 * `{ target, restart(), stop() }`. `durable`: PostgreSQL with fsync on (Redis always syncs its
 * append-only file at every write).
 */
export async function startBackend(backend, { durable = false } = {}) {
  if (backend === 'file') {
    const dir = mkdtempSync(join(tmpdir(), 'cf-file-store-'))
    return { target: dir, restart: async () => {}, stop: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const server = backend === 'postgres' ? await startPostgres({ durable }) : await startRedis()
  try {
    if (backend === 'postgres') await PostgresSession.setup({ connectionString: server.url })
    else await RedisSession.setup({ url: server.url })
  } catch (e) {
    await server.stop()
    throw e
  }
  return { target: server.url, restart: () => server.restart(), stop: () => server.stop(), url: server.url }
}
