// A session store over a database: the entries of a session file kept as numbered rows or list
// items. What to write and what to read is the native core's (LogWriter, logLoadPlan, logLoad);
// the backend (PostgreSQL, Redis) only moves entries, holds the writer lock, and says when an entry
// number is taken.
import { rename, rm, writeFile } from 'node:fs/promises'

import { LogWriter, logHeader, logLoad, logLoadPlan, logMessages } from '../native.js'
import type { LogEntry, Message, Pin, PruneRecord, Session, SessionOptions, StoreWarning } from '../native.js'
import type { SessionLog } from '../session-log.js'
import { ContextfoldError } from '../errors.js'

/** The I/O of one session in one database, as `LogStore` needs it. */
export interface LogBackend {
  /** Names the session in messages (`postgres "public"."contextfold_entries" session "s1"`). */
  readonly label: string
  /** Checks that `setup` made the table or key layout, and that it is contextfold's (`CF_STORE_SETUP`). */
  checkSetup(): Promise<void>
  /** Takes the writer lock without waiting (`CF_SESSION_LOCKED` when another writer holds it). */
  lock(): Promise<void>
  /** Writes the header as entry 1 unless the session has one; returns the header there. */
  create(header: string): Promise<string>
  /** Entry 1, or undefined when the session does not exist. */
  header(): Promise<string | undefined>
  /** Entries `from` to `to - 1` (to the end without `to`), in order. */
  range(from: number, to?: number): Promise<string[]>
  /** The entries of these ranges `[from, to)` and every entry from `tail` on, with their numbers. */
  fetch(ranges: number[][], tail: number): Promise<LogEntry[]>
  /** The number and text of the latest compaction entry, if any. */
  latestCompaction(): Promise<LogEntry | undefined>
  /**
   * Writes `entries` as entries `seq`, `seq + 1`, ... all or none. An entry number already taken
   * (another writer) is `CF_SESSION_LOCKED`; any other failure is thrown as the driver's error.
   */
  write(seq: number, entries: string[]): Promise<void>
  /** Drops the connection and takes a new one (and the lock again, for a writer). */
  reconnect(): Promise<void>
  /** Lets go of the lock and the connection. */
  close(): Promise<void>
}

/** Options of `open` common to the database stores. */
export interface LogOpenOptions {
  /** The session id (the key of its entries). */
  id: string
  /** Create the session when it does not exist (writers only; default true). */
  create?: boolean
  /** Read only: never takes the lock, never writes. */
  readOnly?: boolean
  /** Written to the header of a new session, and the default options of `load()`. */
  session?: SessionOptions
}

/** The type of an entry, from its first bytes (entries start with their `type`). */
export function entryKind(entry: string): string {
  return /^\{"type":"([a-z]+)"/.exec(entry)?.[1] ?? 'unknown'
}

/** A coded error as it is, anything else (a driver's error) as `CF_IO`. */
export function coded(e: unknown, label: string): Error {
  if (typeof (e as { code?: unknown })?.code === 'string' && String((e as { code: string }).code).startsWith('CF_')) return e as Error
  const reason = e instanceof Error ? e.message : String(e)
  return new ContextfoldError('CF_IO', `${label}: the database failed: ${reason}`, { cause: e })
}

/** A session in a database, with the file store's members (as promises). */
export class LogStore implements SessionLog {
  readonly id: string
  readonly readOnly: boolean
  #backend: LogBackend
  #header: string | undefined
  #session: SessionOptions | undefined
  #writer: LogWriter | undefined
  #closed = false
  #warnings: StoreWarning[] = []

  protected constructor(backend: LogBackend, options: LogOpenOptions, header: string | undefined) {
    this.#backend = backend
    this.id = options.id
    this.readOnly = options.readOnly === true
    this.#session = options.session
    this.#header = header
  }

  /** Opens the session on `backend` (see `LogOpenOptions`); closes the backend when it fails. */
  protected static async openOn<T extends LogStore>(
    make: (backend: LogBackend, header: string | undefined) => T,
    backend: LogBackend,
    options: LogOpenOptions,
  ): Promise<T> {
    try {
      await backend.checkSetup()
      let header = await backend.header()
      if (options.readOnly || options.create === false) {
        if (header === undefined) throw new ContextfoldError('CF_SESSION_NOT_FOUND', `${backend.label}: no such session`)
      }
      if (!options.readOnly) {
        await backend.lock()
        header ??= await backend.create(logHeader(options.id, Date.now(), options.session))
      }
      return make(backend, header)
    } catch (e) {
      await backend.close().catch(() => {})
      throw coded(e, backend.label)
    }
  }

  /** What loads and the writer's scan skipped. */
  get warnings(): StoreWarning[] {
    return [...this.#warnings, ...(this.#writer?.warnings ?? [])]
  }

  #check(write: boolean): void {
    if (this.#closed) throw new ContextfoldError('CF_STORE_CLOSED', `${this.#backend.label}: the store is closed`)
    if (write && this.readOnly) throw new ContextfoldError('CF_READ_ONLY', `${this.#backend.label}: opened with readOnly: true`)
  }

  /** The writer, built from the log when there is none (first write, or after a failed one). */
  async #writerNow(): Promise<LogWriter> {
    this.#writer ??= LogWriter.fromEntries(this.#backend.label, await this.#backend.range(1))
    return this.#writer
  }

  /**
   * Writes what a change adds. When the database fails or refuses, the writer is dropped (the next
   * change rebuilds it from the log) and the write is retried once on a new connection, with the
   * lock taken again (`CF_SESSION_LOCKED` if another writer has it now): the entries are looked
   * for first, so an entry whose acknowledgment was lost is not written twice.
   */
  async #change(make: (w: LogWriter) => string[]): Promise<void> {
    this.#check(true)
    const label = this.#backend.label
    let writer: LogWriter
    try {
      writer = await this.#writerNow()
    } catch (e) {
      throw coded(e, label)
    }
    const before = writer.entries
    const entries = make(writer)
    if (entries.length === 0) return
    try {
      await this.#backend.write(before + 1, entries)
      return
    } catch {
      // Refused (a lost lease, a taken entry number) or failed: the retry below sorts it out.
      this.#writer = undefined
    }
    try {
      await this.#backend.reconnect()
      const there = await this.#backend.range(before + 1, before + 1 + entries.length)
      if (there.length === 0) return await this.#backend.write(before + 1, entries)
      if (there.length === entries.length && there.every((t, i) => t === entries[i])) return
      throw new ContextfoldError('CF_SESSION_LOCKED', `${label}: another writer wrote entry ${before + 1} meanwhile`)
    } catch (e) {
      throw coded(e, label)
    }
  }

  /** Appends a message (`CF_DUPLICATE_ID`, nothing written, for an id already there). */
  append(message: Message): Promise<void> {
    return this.#change((w) => w.append(message))
  }

  /** Records the new version of a message (`CF_NOT_FOUND` for an id not there). */
  update(message: Message): Promise<void> {
    return this.#change((w) => w.update(message))
  }

  /** Records a prune, as `Session.prune()` returned it. */
  prune(result: PruneRecord): Promise<void> {
    return this.#change((w) => w.prune(result))
  }

  /** Records the session's pins as they stand; a load restores the last ones recorded. */
  pins(pins: Pin[]): Promise<void> {
    return this.#change((w) => w.pins(pins))
  }

  async #headerNow(): Promise<string> {
    this.#header ??= await this.#backend.header()
    if (this.#header === undefined) throw new ContextfoldError('CF_SESSION_NOT_FOUND', `${this.#backend.label}: no such session`)
    return this.#header
  }

  /** The session options the header records (given to `open` as `session` when it was created). */
  async sessionOptions(): Promise<SessionOptions | undefined> {
    this.#check(false)
    const header = JSON.parse(await this.#headerNow()) as { session?: SessionOptions }
    return header.session ?? undefined
  }

  /**
   * A `Session` with what the context needs, read tail-first: from the latest compaction entry,
   * the entries it names and those after it. Options: the given ones, else `open`'s `session`,
   * else the header's.
   */
  async load(options?: SessionOptions): Promise<Session> {
    const label = this.#backend.label
    const given = options ?? this.#session
    return this.#read(async () => {
      const header = await this.#headerNow()
      const latest = await this.#backend.latestCompaction()
      const plan = latest && logLoadPlan(latest.entry)
      if (latest && plan) {
        const entries = await this.#backend.fetch(plan.ranges, plan.tail)
        const session = logLoad(label, header, entries, given, latest.seq)
        if (session) return session
        this.#warnings.push({ line: latest.seq, offset: latest.seq, message: 'compaction entry does not match the log (a crash between writes?): read every entry' })
      }
      const all = await this.#backend.range(2)
      return logLoad(label, header, all.map((entry, i) => ({ seq: i + 2, entry })), given) as Session
    })
  }

  /** Every message, hidden ones included, each in its latest version. */
  loadAll(): Promise<Message[]> {
    return this.#read(async () => {
      await this.#headerNow()
      return logMessages(this.#backend.label, await this.#backend.range(2))
    })
  }

  /** A read; when the database fails (not a coded refusal), once more on a new connection. */
  async #read<T>(f: () => Promise<T>): Promise<T> {
    this.#check(false)
    try {
      return await f()
    } catch (e) {
      if (String((e as { code?: unknown })?.code).startsWith('CF_')) throw e
    }
    try {
      await this.#backend.reconnect()
      return await f()
    } catch (e) {
      throw coded(e, this.#backend.label)
    }
  }

  /** Writes every message as plain JSONL (one message per line) to `path`; returns how many. */
  async export(path: string): Promise<number> {
    const messages = await this.loadAll()
    const tmp = `${path}.${process.pid}.tmp`
    try {
      await writeFile(tmp, messages.map((m) => JSON.stringify(m) + '\n').join(''))
      await rename(tmp, path)
    } catch (e) {
      await rm(tmp, { force: true })
      throw new ContextfoldError('CF_IO', `cannot export to ${path}: ${(e as Error).message}`, { cause: e })
    }
    return messages.length
  }

  /** Releases the lock (and the connection); the store cannot be used afterwards. Closing twice is fine. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#writer = undefined
    await this.#backend.close()
  }
}
