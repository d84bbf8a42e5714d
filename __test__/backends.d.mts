// Types of backends.mjs (a plain module so that worker processes and scripts can import it).
import type { OpenSessionLog, SessionStore, StoreOptions } from '../dist/index.js'
import type { PostgresSessionStore } from '../dist/postgres/index.js'
import type { RedisSessionStore } from '../dist/redis/index.js'

export type Backend = 'file' | 'postgres' | 'redis'
export declare const BACKENDS: Backend[]
export declare const TEST_LEASE_MS: number
export declare function openStore(
  backend: Backend,
  target: string,
  id: string,
  options?: Omit<StoreOptions, 'durability'>,
): Promise<SessionStore | PostgresSessionStore | RedisSessionStore>
export declare function sessionsOf(backend: Backend, target: string): OpenSessionLog
export declare function startBackend(backend: Backend, options?: { durable?: boolean }): Promise<{ target: string; url?: string; restart(): Promise<void>; stop(): Promise<void> }>
