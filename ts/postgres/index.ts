// contextfold/postgres: sessions in PostgreSQL through node-postgres (`pg`, an optional peer),
// the app's `Pool` or a connection string. One row per entry; one writer per session, held by a
// session-level advisory lock on a connection the store keeps while it is open.
import type { Pool, PoolClient, PoolConfig } from 'pg'

import type { SessionStore } from '../session-log.js'
import { ContextfoldError } from '../errors.js'
import { LogStore, coded, entryKind, type LogBackend, type LogOpenOptions } from '../stores/log-store.js'
import { checkSchema, names, schemaSql, type PostgresTable } from './schema.js'

export { schemaSql, type PostgresTable } from './schema.js'

/** How to reach the database: the app's pool, or a connection string (the store makes a pool and ends it on close). */
export type PostgresConnection = { pool: Pool; connectionString?: undefined } | { connectionString: string; pool?: undefined; poolConfig?: Omit<PoolConfig, 'connectionString'> }

/** Options of `PostgresSession.open`. */
export type PostgresOpenOptions = PostgresConnection & PostgresTable & LogOpenOptions

/** A pool made from a connection string (node-postgres loaded only now). */
async function poolOf(c: PostgresConnection): Promise<{ pool: Pool; own: boolean }> {
  if (c.pool) return { pool: c.pool, own: false }
  if (typeof c.connectionString !== 'string') throw new ContextfoldError('CF_INVALID_ARGUMENT', 'PostgreSQL: pass `pool` or `connectionString`')
  const pg = (await import('pg')).default
  const pool = new pg.Pool({ max: 4, allowExitOnIdle: true, ...('poolConfig' in c ? c.poolConfig : {}), connectionString: c.connectionString })
  // An idle connection the server dropped: the next query reports it; not a crash.
  pool.on('error', () => {})
  return { pool, own: true }
}

// A dropped connection: its next query fails, and the store retries on a new one.
const ignoreError = () => {}

/** Gives a connection back to the pool (`destroy`: it is broken, drop it). */
function release(client: PoolClient, destroy = false): void {
  client.off('error', ignoreError)
  client.release(destroy)
}

/** A session's rows, and its writer connection. */
class PostgresBackend implements LogBackend {
  readonly label: string
  #pool: Pool
  #own: boolean
  #table: string
  #names: PostgresTable
  #id: string
  #writer: PoolClient | undefined
  #locked = false

  constructor(pool: Pool, own: boolean, t: PostgresTable, id: string) {
    this.#pool = pool
    this.#own = own
    this.#table = names(t).qualified
    this.#names = t
    this.#id = id
    this.label = `PostgreSQL ${names(t).display} session ${JSON.stringify(id)}`
  }

  checkSetup(): Promise<void> {
    return checkSchema(this.#pool, this.#names)
  }

  /** The writer's connection, or the pool for reads. */
  get #db(): Pool | PoolClient {
    return this.#writer ?? this.#pool
  }

  async lock(): Promise<void> {
    const client = await this.#pool.connect()
    client.on('error', ignoreError)
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok', [`${this.#table}/${this.#id}`]).catch((e: unknown) => {
      release(client, true)
      throw e
    })
    if (!rows[0]?.ok) {
      release(client)
      throw new ContextfoldError('CF_SESSION_LOCKED', `${this.label}: another writer has this session open; open it with readOnly: true to read it`)
    }
    this.#writer = client
    this.#locked = true
  }

  async create(header: string): Promise<string> {
    await this.#db.query(`INSERT INTO ${this.#table} (session_id, seq, kind, entry) VALUES ($1, 1, 'header', $2) ON CONFLICT DO NOTHING`, [this.#id, header])
    return (await this.header()) ?? header
  }

  async header(): Promise<string | undefined> {
    const { rows } = await this.#db.query<{ entry: string }>(`SELECT entry FROM ${this.#table} WHERE session_id = $1 AND seq = 1`, [this.#id])
    return rows[0]?.entry
  }

  async range(from: number, to?: number): Promise<string[]> {
    const { rows } = await this.#db.query<{ entry: string }>(
      `SELECT entry FROM ${this.#table} WHERE session_id = $1 AND seq >= $2 AND ($3::bigint IS NULL OR seq < $3) ORDER BY seq`,
      [this.#id, from, to ?? null],
    )
    return rows.map((r) => r.entry)
  }

  async fetch(ranges: number[][], tail: number): Promise<{ seq: number; entry: string }[]> {
    // Index range scans only: the tail, and each range joined on the primary key.
    const { rows } = await this.#db.query<{ seq: string; entry: string }>(
      `SELECT seq, entry FROM ${this.#table} WHERE session_id = $1 AND seq >= $2
       UNION ALL
       SELECT e.seq, e.entry FROM unnest($3::bigint[], $4::bigint[]) AS r(a, b)
         JOIN ${this.#table} e ON e.session_id = $1 AND e.seq >= r.a AND e.seq < r.b`,
      [this.#id, tail, ranges.map((r) => r[0]), ranges.map((r) => r[1])],
    )
    return rows.map((r) => ({ seq: Number(r.seq), entry: r.entry }))
  }

  async latestCompaction(): Promise<{ seq: number; entry: string } | undefined> {
    const { rows } = await this.#db.query<{ seq: string; entry: string }>(
      `SELECT seq, entry FROM ${this.#table} WHERE session_id = $1 AND kind = 'compaction' ORDER BY seq DESC LIMIT 1`,
      [this.#id],
    )
    return rows[0] && { seq: Number(rows[0].seq), entry: rows[0].entry }
  }

  async write(seq: number, entries: string[]): Promise<void> {
    try {
      // One statement: all rows or none.
      await this.#db.query(
        `INSERT INTO ${this.#table} (session_id, seq, kind, entry) SELECT $1, s, k, e FROM unnest($2::bigint[], $3::text[], $4::text[]) AS t(s, k, e)`,
        [this.#id, entries.map((_, i) => seq + i), entries.map(entryKind), entries],
      )
    } catch (e) {
      if ((e as { code?: unknown }).code === '23505') {
        throw new ContextfoldError('CF_SESSION_LOCKED', `${this.label}: entry ${seq} was written by another writer`, { cause: e })
      }
      throw e
    }
  }

  async reconnect(): Promise<void> {
    if (this.#writer) release(this.#writer, true)
    this.#writer = undefined
    if (this.#locked) await this.lock()
  }

  async close(): Promise<void> {
    const writer = this.#writer
    this.#writer = undefined
    try {
      if (writer) {
        // Unlocking by query keeps the connection for the pool; a broken one is just dropped (the server released the lock with it).
        await writer.query('SELECT pg_advisory_unlock_all()').then(
          () => release(writer),
          () => release(writer, true),
        )
      }
    } finally {
      if (this.#own) await this.#pool.end()
    }
  }
}

/**
 * A session kept in PostgreSQL: the file store's members as promises. One row per entry in
 * `<schema>.<table>` (see `schemaSql`); one writer per session (an advisory lock, released by the
 * server when the writer's connection ends, so a killed writer blocks nobody).
 *
 * @example
 * await PostgresSession.setup({ pool })          // once
 * const store = await PostgresSession.open({ pool, id: 'chat-1', session: options })
 * await store.append(message)
 * const session = await store.load()
 */
export class PostgresSession extends LogStore {
  /**
   * Opens session `id` (created when missing, unless `create: false`); `readOnly` never locks.
   * `CF_SESSION_LOCKED` when another writer has it open; `CF_STORE_SETUP` when the table is
   * missing (run `setup`) or is not a contextfold table.
   */
  static async open(options: PostgresOpenOptions): Promise<PostgresSession> {
    const { pool, own } = await poolOf(options)
    const backend = new PostgresBackend(pool, own, options, options.id)
    return LogStore.openOn((b, header) => new PostgresSession(b, options, header), backend, options)
  }

  /**
   * Creates the schema, table and index when missing (idempotent; safe to run concurrently), then
   * checks them: `CF_STORE_SETUP` when a table of that name is not contextfold's.
   */
  static async setup(options: PostgresConnection & PostgresTable): Promise<void> {
    const { pool, own } = await poolOf(options)
    const client = await pool.connect()
    try {
      await client.query('BEGIN')
      await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('contextfold setup', 0))`)
      const { rows } = await client.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [names(options).qualified])
      if (rows[0]?.t == null) for (const sql of schemaSql(options)) await client.query(sql)
      await client.query('COMMIT')
      await checkSchema(client, options)
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {})
      throw coded(e, `PostgreSQL ${names(options).display}`)
    } finally {
      client.release()
      if (own) await pool.end()
    }
  }

  /**
   * The sessions of one database as an `SessionStore`, for the AI SDK middleware's `store`
   * option: processes sharing the database share conversations.
   *
   * @example
   * contextfoldMiddleware({ store: PostgresSession.sessions({ pool }) })
   */
  static sessions(options: PostgresConnection & PostgresTable & Omit<LogOpenOptions, 'id' | 'readOnly'>): SessionStore {
    // A connection string gets one pool for every session of the factory (idle, it lets the process exit).
    let shared: Promise<Pool> | undefined
    return async (id) => {
      shared ??= poolOf(options).then((p) => p.pool)
      const pool = await shared
      return PostgresSession.open({ ...options, connectionString: undefined, pool, id })
    }
  }
}

/** `PostgresSession.sessions`: the sessions of one database as an `SessionStore`. */
export const postgresStore = PostgresSession.sessions
