// The native `SessionStore`, when this build of the addon has it: contextfold session files
// (append-only JSONL whose first line is a `{"type":"header",...}` record).
import { createRequire } from 'node:module'

import type { Message, Session, SessionOptions } from '../../native.js'

export interface StoreWarning {
  /** 1-based line (1 is the header). */
  line: number
  offset?: number
  message: string
}

/** The part of the native `SessionStore` the CLI uses. */
export interface SessionStoreLike {
  append(message: Message): void
  update(message: Message): void
  flush(): void
  close(): void
  load(options?: SessionOptions): Session
  loadAll(): Message[]
  export(path: string): number
  readonly warnings?: StoreWarning[]
}

export interface StoreOpenOptions {
  create?: boolean
  readOnly?: boolean
  durability?: 'entry' | 'batch'
  recover?: boolean
  session?: SessionOptions
}

export interface SessionStoreClass {
  open(path: string, options?: StoreOpenOptions): SessionStoreLike
}

let cached: SessionStoreClass | null | undefined

/** The native `SessionStore` class, or `undefined` when the loaded addon has none. */
export function sessionStore(): SessionStoreClass | undefined {
  if (cached === undefined) {
    const native = createRequire(import.meta.url)('../../native.js') as { SessionStore?: unknown }
    const cls = native.SessionStore as Partial<SessionStoreClass> | undefined
    cached = cls && typeof cls.open === 'function' ? (cls as SessionStoreClass) : null
  }
  return cached ?? undefined
}

/** What a store file's first line says: `{"type":"header","version":N,...}`. */
export interface StoreHeader {
  type: 'header'
  version: number
  id?: string
  created?: number
  session?: SessionOptions
}

export function isStoreHeader(value: unknown): value is StoreHeader {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const v = value as Record<string, unknown>
  return v.type === 'header' && typeof v.version === 'number'
}
