// contextfold/redis: sessions in Redis through ioredis (an optional peer), the app's client or a
// URL. A session is a list of entries; its writer holds a lease (a key with an expiry it renews)
// and every append is a script that checks the lease and the entry number (a conditional append).
import { randomUUID } from 'node:crypto'

import type { Redis, RedisOptions } from 'ioredis'

import type { SessionStore } from '../session-log.js'
import { ContextfoldError } from '../errors.js'
import { LogStore, coded, entryKind, type LogBackend, type LogOpenOptions } from '../stores/log-store.js'


/** What `setup` writes at `<prefix>layout`, and `open` checks. */
const LAYOUT = 'contextfold session log v1'

/** How long a writer's lease lasts without renewal: a writer killed with SIGKILL blocks the next one at most this long. */
const LEASE_MS = 10_000

/** How to reach Redis: the app's ioredis client, or a URL (the store makes a client and quits it on close). */
export type RedisConnection = { client: Redis; url?: undefined } | { url: string; client?: undefined; redisOptions?: RedisOptions }

/** The key layout: every key starts with `prefix` (default `contextfold:`). */
export interface RedisLayout {
  prefix?: string
  /** The writer's lease in ms (default `LEASE_MS`). */
  leaseMs?: number
}

/** Options of `RedisSession.open`. */
export type RedisOpenOptions = RedisConnection & RedisLayout & LogOpenOptions

/**
 * The keys of session `id`. The `{id}` hash tag keeps them in one Redis Cluster slot (the scripts
 * touch several).
 */
export function redisKeys(id: string, prefix = 'contextfold:'): { log: string; lease: string; latest: string; layout: string } {
  const base = `${prefix}{${id}}`
  return { log: `${base}:log`, lease: `${base}:lease`, latest: `${base}:latest`, layout: `${prefix}layout` }
}

// Takes the lease, or renews it when it is already ours.
const LOCK = `local v = redis.call('GET', KEYS[1])
if v == false or v == ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`

// Extends the lease while it is still ours (a lost one is taken again only by a write's retry).
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`

const UNLOCK = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end return 1`

const CREATE = `if redis.call('GET', KEYS[2]) ~= ARGV[1] then return redis.error_reply('CF_SESSION_LOCKED') end
if redis.call('LLEN', KEYS[1]) == 0 then redis.call('RPUSH', KEYS[1], ARGV[2]) end
return redis.call('LINDEX', KEYS[1], 0)`

// KEYS: log, lease, latest. ARGV: token, first entry number, latest compaction number or '', entries.
// Entries already there (a resent command) are fine; anything else at that number is another writer's.
const APPEND = `if redis.call('GET', KEYS[2]) ~= ARGV[1] then return redis.error_reply('CF_SESSION_LOCKED lease') end
local seq = tonumber(ARGV[2])
local n = redis.call('LLEN', KEYS[1])
if n ~= seq - 1 then
  local there = redis.call('LRANGE', KEYS[1], seq - 1, seq - 2 + #ARGV - 3)
  if #there == #ARGV - 3 then
    for i = 1, #there do if there[i] ~= ARGV[i + 3] then return redis.error_reply('CF_SESSION_LOCKED seq') end end
    return 'SAME'
  end
  return redis.error_reply('CF_SESSION_LOCKED seq')
end
redis.call('RPUSH', KEYS[1], unpack(ARGV, 4))
if ARGV[3] ~= '' then redis.call('SET', KEYS[3], ARGV[3]) end
return 'OK'`

async function clientOf(c: RedisConnection): Promise<{ client: Redis; own: boolean }> {
  if (c.client) return { client: c.client, own: false }
  if (typeof c.url !== 'string') throw new ContextfoldError('CF_INVALID_ARGUMENT', 'Redis: pass `client` or `url`')
  const { Redis: Client } = await import('ioredis')
  const client = new Client(c.url, { ...('redisOptions' in c ? c.redisOptions : {}) })
  client.on('error', () => {}) // reconnects by itself; commands report failures
  return { client, own: true }
}

/** A Redis error as a coded one: a foreign key's type, our scripts' refusals. */
function redisError(e: unknown, label: string): unknown {
  const message = e instanceof Error ? e.message : String(e)
  if (message.startsWith('WRONGTYPE')) {
    return new ContextfoldError('CF_STORE_SETUP', `${label}: a key of the session holds another application's data (${message})`, { cause: e })
  }
  if (message.startsWith('CF_SESSION_LOCKED')) {
    return new ContextfoldError('CF_SESSION_LOCKED', `${label}: another writer has this session open (or took it over after this writer's lease expired)`, { cause: e })
  }
  return e
}

class RedisBackend implements LogBackend {
  readonly label: string
  #client: Redis
  #own: boolean
  #keys: ReturnType<typeof redisKeys>
  #lease: number
  #token = randomUUID()
  #renew: ReturnType<typeof setInterval> | undefined

  constructor(client: Redis, own: boolean, layout: RedisLayout, id: string) {
    this.#client = client
    this.#own = own
    this.#keys = redisKeys(id, layout.prefix)
    this.#lease = layout.leaseMs ?? LEASE_MS
    this.label = `Redis ${this.#keys.log}`
  }

  async #run<T>(f: () => Promise<T>): Promise<T> {
    try {
      return await f()
    } catch (e) {
      throw redisError(e, this.label)
    }
  }

  async checkSetup(): Promise<void> {
    const found = await this.#run(() => this.#client.get(this.#keys.layout))
    if (found === null) {
      throw new ContextfoldError('CF_STORE_SETUP', `Redis: no ${this.#keys.layout} key: run RedisSession.setup({ ... }) or \`contextfold migrate <url>\` once`)
    }
    if (found !== LAYOUT) throw new ContextfoldError('CF_STORE_SETUP', `Redis: ${this.#keys.layout} holds ${JSON.stringify(found.slice(0, 80))}, not a contextfold layout: choose another prefix`)
  }

  async lock(): Promise<void> {
    const ok = await this.#run(() => this.#client.eval(LOCK, 1, this.#keys.lease, this.#token, this.#lease))
    if (ok !== 1) throw new ContextfoldError('CF_SESSION_LOCKED', `${this.label}: another writer has this session open (its lease ends within ${this.#lease} ms of its last renewal); open it with readOnly: true to read it`)
    if (!this.#renew) {
      // Renewed well before it runs out; a failed renewal shows at the next append (the script checks the lease).
      this.#renew = setInterval(() => void this.#client.eval(RENEW, 1, this.#keys.lease, this.#token, this.#lease).catch(() => {}), this.#lease / 3)
      this.#renew.unref()
    }
  }

  async create(header: string): Promise<string> {
    return this.#run(async () => String(await this.#client.eval(CREATE, 2, this.#keys.log, this.#keys.lease, this.#token, header)))
  }

  async header(): Promise<string | undefined> {
    return (await this.#run(() => this.#client.lindex(this.#keys.log, 0))) ?? undefined
  }

  async range(from: number, to?: number): Promise<string[]> {
    return this.#run(() => this.#client.lrange(this.#keys.log, from - 1, to === undefined ? -1 : to - 2))
  }

  async fetch(ranges: number[][], tail: number): Promise<{ seq: number; entry: string }[]> {
    const p = this.#client.pipeline()
    const starts = [...ranges.map((r) => r[0]!), tail]
    for (const [a, b] of ranges) p.lrange(this.#keys.log, a! - 1, b! - 2)
    p.lrange(this.#keys.log, tail - 1, -1)
    const results = await this.#run(async () => (await p.exec()) ?? [])
    return results.flatMap(([err, list], k) => {
      if (err) throw redisError(err, this.label)
      return (list as string[]).map((entry, i) => ({ seq: starts[k]! + i, entry }))
    })
  }

  async latestCompaction(): Promise<{ seq: number; entry: string } | undefined> {
    const seq = Number(await this.#run(() => this.#client.get(this.#keys.latest)))
    if (!Number.isInteger(seq) || seq < 1) return undefined
    const entry = await this.#run(() => this.#client.lindex(this.#keys.log, seq - 1))
    return entry === null ? undefined : { seq, entry }
  }

  async write(seq: number, entries: string[]): Promise<void> {
    const last = entries.map(entryKind).lastIndexOf('compaction')
    await this.#run(() => this.#client.eval(APPEND, 3, this.#keys.log, this.#keys.lease, this.#keys.latest, this.#token, seq, last < 0 ? '' : seq + last, ...entries))
  }

  async reconnect(): Promise<void> {
    // ioredis reconnects by itself; the lease is taken again when it ran out meanwhile.
    if (this.#renew) await this.lock()
  }

  async close(): Promise<void> {
    clearInterval(this.#renew)
    try {
      if (this.#renew) await this.#client.eval(UNLOCK, 1, this.#keys.lease, this.#token).catch(() => {})
    } finally {
      this.#renew = undefined
      if (this.#own) await this.#client.quit().catch(() => this.#client.disconnect())
    }
  }
}

/**
 * A session kept in Redis: the file store's members as promises. The entries are a list at
 * `<prefix>{<id>}:log` (entry n at index n - 1), the number of the latest compaction entry at
 * `<prefix>{<id>}:latest`, the writer's lease at `<prefix>{<id>}:lease`.
 *
 * One writer per session: a lease (`SET NX PX`, renewed every third of `leaseMs`) and appends by a
 * script that checks the lease and the entry number, so a writer that lost its lease (paused past
 * it, or cut off) cannot write over the next one, and a killed writer blocks others at most `leaseMs`.
 *
 * @example
 * await RedisSession.setup({ client })           // once
 * const store = await RedisSession.open({ client, id: 'chat-1', session: options })
 */
export class RedisSession extends LogStore {
  /**
   * Opens session `id` (created when missing, unless `create: false`); `readOnly` takes no lease.
   * `CF_SESSION_LOCKED` when another writer holds the lease; `CF_STORE_SETUP` without `setup`.
   */
  static async open(options: RedisOpenOptions): Promise<RedisSession> {
    const { client, own } = await clientOf(options)
    const backend = new RedisBackend(client, own, options, options.id)
    return LogStore.openOn((b, header) => new RedisSession(b, options, header), backend, options)
  }

  /** Writes the layout marker `<prefix>layout` when missing (idempotent), then checks it. */
  static async setup(options: RedisConnection & RedisLayout): Promise<void> {
    const { client, own } = await clientOf(options)
    const backend = new RedisBackend(client, false, options, '')
    try {
      const key = redisKeys('', options.prefix).layout
      await client.set(key, LAYOUT, 'NX').catch((e: unknown) => {
        throw redisError(e, `Redis ${key}`)
      })
      await backend.checkSetup()
    } catch (e) {
      throw coded(e, 'Redis')
    } finally {
      if (own) await client.quit().catch(() => client.disconnect())
    }
  }

  /**
   * The sessions of one Redis as an `SessionStore`, for the AI SDK middleware's `store` option.
   *
   * @example
   * contextfoldMiddleware({ store: RedisSession.sessions({ client }) })
   */
  static sessions(options: RedisConnection & RedisLayout & Omit<LogOpenOptions, 'id' | 'readOnly'>): SessionStore {
    // A URL gets one client for every session of the factory (pass your own to control its life).
    let shared: Promise<Redis> | undefined
    return async (id) => {
      shared ??= clientOf(options).then((c) => c.client)
      const client = await shared
      return RedisSession.open({ ...options, url: undefined, client, id })
    }
  }
}

/** `RedisSession.sessions`: the sessions of one Redis as an `SessionStore`. */
export const redisStore = RedisSession.sessions
