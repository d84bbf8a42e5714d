// Types of backends.mjs (a plain module so that worker processes and scripts can import it).
import type { SessionStore, SessionFile, StoreOptions } from '../dist/index.js'
import type { PostgresSession } from '../dist/postgres/index.js'
import type { RedisSession } from '../dist/redis/index.js'

export type Backend = 'file' | 'postgres' | 'redis'
export declare const BACKENDS: Backend[]
export declare const TEST_LEASE_MS: number
export declare function openStore(
  backend: Backend,
  target: string,
  id: string,
  options?: Omit<StoreOptions, 'durability'>,
): Promise<SessionFile | PostgresSession | RedisSession>
export declare function sessionsOf(backend: Backend, target: string): SessionStore
export declare function startBackend(backend: Backend, options?: { durable?: boolean }): Promise<{ target: string; url?: string; restart(): Promise<void>; stop(): Promise<void> }>
