// The first line of a contextfold session file: `{"type":"header","version":N,...}`.
import type { SessionOptions } from '../../native.js'

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
