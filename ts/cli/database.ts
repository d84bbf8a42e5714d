// Sessions in a database, for the CLI: a PostgreSQL or Redis URL and a session id (--session),
// read as a session file is; and `contextfold migrate <url>`. The database subpaths (and their
// drivers) are loaded only when a URL is given.
import type { Message, SessionOptions } from '../native.js'
import type { LogStore } from '../stores/log-store.js'
import { CliError, EXIT, inputError, usageError } from './errors.js'

/** Where the entries are: the options of `contextfold/postgres` and `contextfold/redis`. */
export interface DatabaseFlags {
  /** The session id in the database. */
  session?: string
  /** PostgreSQL: the schema (default public). */
  schema?: string
  /** PostgreSQL: the table (default contextfold_entries). */
  table?: string
  /** Redis: the key prefix (default contextfold:). */
  prefix?: string
}

type Kind = 'postgres' | 'redis'

/** The database a URL names, if it names one. */
export function databaseOf(url: string): Kind | undefined {
  if (/^postgres(?:ql)?:\/\//i.test(url)) return 'postgres'
  if (/^rediss?:\/\//i.test(url)) return 'redis'
  return undefined
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@/]*@/i, '$1:***@')
}

/** A driver the app did not install: what to install. */
function driverMissing(kind: Kind, e: unknown): CliError | undefined {
  const code = (e as { code?: unknown })?.code
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined
  const pkg = kind === 'postgres' ? 'pg' : 'ioredis'
  return new CliError(EXIT.FAILURE, 'CF_UNSUPPORTED', `reading ${kind === 'postgres' ? 'PostgreSQL' : 'Redis'} needs the \`${pkg}\` package: npm install ${pkg}`)
}

function layout(kind: Kind, url: string, flags: DatabaseFlags) {
  if (kind === 'postgres') {
    const o: { connectionString: string; schema?: string; table?: string } = { connectionString: url }
    if (flags.schema !== undefined) o.schema = flags.schema
    if (flags.table !== undefined) o.table = flags.table
    return o
  }
  const o: { url: string; prefix?: string } = { url }
  if (flags.prefix !== undefined) o.prefix = flags.prefix
  return o
}

/** Opens session `flags.session` read-only. */
async function open(kind: Kind, url: string, flags: DatabaseFlags): Promise<LogStore> {
  if (!flags.session) throw usageError(`${redact(url)}: name the session with --session <id>`)
  const options = { ...layout(kind, url, flags), id: flags.session, readOnly: true }
  if (kind === 'postgres') {
    const { PostgresSession } = await import('../postgres/index.js')
    return PostgresSession.open(options as Parameters<typeof PostgresSession.open>[0])
  }
  const { RedisSession } = await import('../redis/index.js')
  return RedisSession.open(options as Parameters<typeof RedisSession.open>[0])
}

/** Every message of a session in a database, and the session options its header records. */
export async function loadDatabase(url: string, flags: DatabaseFlags): Promise<{ file: string; messages: Message[]; sessionOptions?: SessionOptions }> {
  const kind = databaseOf(url)!
  const file = `${redact(url)} session ${flags.session ?? ''}`.trim()
  let store: LogStore | undefined
  try {
    store = await open(kind, url, flags)
    const messages = await store.loadAll()
    const sessionOptions = await store.sessionOptions()
    return sessionOptions ? { file, messages, sessionOptions } : { file, messages }
  } catch (e) {
    throw driverMissing(kind, e) ?? inputError(file, e)
  } finally {
    await store?.close().catch(() => {})
  }
}

/** `contextfold migrate <url>`: the database's `setup` (idempotent). */
export async function migrate(url: string, flags: DatabaseFlags): Promise<string> {
  const kind = databaseOf(url)
  if (!kind) throw usageError(`${redact(url)}: not a postgres:// or redis:// URL`)
  try {
    if (kind === 'postgres') {
      const { PostgresSession } = await import('../postgres/index.js')
      const o = layout(kind, url, flags) as Parameters<typeof PostgresSession.setup>[0]
      await PostgresSession.setup(o)
      return `${redact(url)}: table ${flags.schema ?? 'public'}.${flags.table ?? 'contextfold_entries'} ready`
    }
    const { RedisSession } = await import('../redis/index.js')
    await RedisSession.setup(layout(kind, url, flags) as Parameters<typeof RedisSession.setup>[0])
    return `${redact(url)}: key layout ${flags.prefix ?? 'contextfold:'} ready`
  } catch (e) {
    throw driverMissing(kind, e) ?? new CliError(EXIT.FAILURE, String((e as { code?: unknown })?.code ?? 'CF_IO'), `${redact(url)}: ${(e as Error).message}`, { cause: e })
  }
}
