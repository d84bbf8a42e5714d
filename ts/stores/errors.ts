// Errors of the database stores: each an `Error` with a stable `code`, the same codes the file
// store's native errors carry where they mean the same.

/** Codes of the errors the database stores raise. */
export type StoreErrorCode =
  /** Another writer has the session open (a held lock, or an entry number already taken). */
  | 'CF_SESSION_LOCKED'
  /** `create: false` or `readOnly: true`, and the session is not there. */
  | 'CF_SESSION_NOT_FOUND'
  /** The database has no contextfold schema (run `setup()` or `contextfold migrate <url>`), or another application's table or key is where it should be. */
  | 'CF_STORE_SETUP'
  /** An entry of the log is not what contextfold writes (from the native decoder). */
  | 'CF_CORRUPT_SESSION'
  /** The database could not be reached, or failed, and a retry on a new connection failed too. */
  | 'CF_IO'
  /** Opened with `readOnly: true`. */
  | 'CF_READ_ONLY'
  /** Used after `close()`. */
  | 'CF_STORE_CLOSED'
  /** Neither a client nor a connection string / URL was given. */
  | 'CF_INVALID_ARGUMENT'

/** An error of a database store, with a stable `code`; `cause` is the driver's error, if any. */
export class StoreError extends Error {
  readonly code: StoreErrorCode

  constructor(code: StoreErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'StoreError'
    this.code = code
  }
}
