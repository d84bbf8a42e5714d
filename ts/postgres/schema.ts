// The PostgreSQL layout: one table of entries, one row per entry of a session's log.
import type { Pool, PoolClient } from 'pg'

import { ContextfoldError } from '../errors.js'

/** Where the entries live: a schema and a table name (defaults `public`, `contextfold_entries`). */
export interface PostgresTable {
  /** The schema (created by `setup` when missing; default `public`). */
  schema?: string
  /** The table (default `contextfold_entries`). */
  table?: string
}

/** The comment `setup` puts on the table: how `open` tells its table from another application's. */
export const TABLE_COMMENT = 'contextfold session log v1'

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`

/** The quoted names of a layout. */
export function names(t: PostgresTable): { schema: string; table: string; qualified: string; index: string; display: string } {
  const schema = t.schema ?? 'public'
  const table = t.table ?? 'contextfold_entries'
  return {
    schema: quote(schema),
    table: quote(table),
    qualified: `${quote(schema)}.${quote(table)}`,
    index: quote(`${table}_compaction`),
    display: `${schema}.${table}`,
  }
}

/**
 * The DDL `setup` runs (idempotent). `seq` numbers a session's entries from 1 (the header); the
 * primary key makes an entry number taken twice a conflict; the partial index finds a session's
 * latest compaction entry without reading its messages.
 */
export function schemaSql(t: PostgresTable): string[] {
  const n = names(t)
  return [
    `CREATE SCHEMA IF NOT EXISTS ${n.schema}`,
    `CREATE TABLE IF NOT EXISTS ${n.qualified} (
  session_id text NOT NULL,
  seq bigint NOT NULL CHECK (seq >= 1),
  kind text NOT NULL,
  entry text NOT NULL,
  PRIMARY KEY (session_id, seq)
)`,
    `CREATE INDEX IF NOT EXISTS ${n.index} ON ${n.qualified} (session_id, seq) WHERE kind = 'compaction'`,
    `COMMENT ON TABLE ${n.qualified} IS '${TABLE_COMMENT}'`,
  ]
}

const COLUMNS = 'session_id:text,seq:bigint,kind:text,entry:text'

/** `CF_STORE_SETUP` unless the table is there, with our columns and comment. */
export async function checkSchema(db: Pool | PoolClient, t: PostgresTable): Promise<void> {
  const n = names(t)
  const { rows } = await db.query<{ comment: string | null; columns: string | null }>(
    `SELECT obj_description(c.oid, 'pg_class') AS comment,
            (SELECT string_agg(a.attname || ':' || format_type(a.atttypid, a.atttypmod), ',' ORDER BY a.attnum)
               FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns
       FROM pg_class c WHERE c.oid = to_regclass($1)`,
    [n.qualified],
  )
  const found = rows[0]
  if (!found) {
    throw new ContextfoldError(
      'CF_STORE_SETUP',
      `PostgreSQL: no table ${n.display}: run PostgresSession.setup({ ... }) or \`contextfold migrate <url>\` once to create it`,
    )
  }
  if (found.comment !== TABLE_COMMENT || found.columns !== COLUMNS) {
    throw new ContextfoldError(
      'CF_STORE_SETUP',
      `PostgreSQL: table ${n.display} is not a contextfold session log (columns ${found.columns ?? 'none'}, comment ${JSON.stringify(found.comment)}): choose another schema or table`,
    )
  }
}
