// One error family: every error contextfold raises has a stable `code`. The TypeScript layer's
// are `ContextfoldError`s; the native addon's are plain `Error`s with a `code` (napi-rs builds them);
// `isContextfoldError` recognises both, across realms and copies of the package.

/** Every `code` a contextfold error carries. */
export type ErrorCode =
  // The native session, store and importer.
  /** A message or part is missing a required field or has a wrong type. */
  | 'CF_INVALID_MESSAGE'
  /** A bad argument or option (options, encodings, ids to update, a store with neither client nor URL). */
  | 'CF_INVALID_ARGUMENT'
  /** A message id is already in the session. */
  | 'CF_DUPLICATE_ID'
  /** A message id (or a transcript file) that should exist does not. */
  | 'CF_NOT_FOUND'
  /** An `AbortSignal` fired; `name` is `AbortError`. */
  | 'CF_ABORTED'
  /** `importTranscript` found no format it reads (or no JSON at all). */
  | 'CF_UNKNOWN_FORMAT'
  /** A stored entry is not what contextfold writes (line number and byte offset given for files). */
  | 'CF_CORRUPT_SESSION'
  /** Another writer has the session open (a held lock, or an entry number already taken). */
  | 'CF_SESSION_LOCKED'
  /** `create: false` or `readOnly: true`, and the session is not there. */
  | 'CF_SESSION_NOT_FOUND'
  /** A write on a store opened with `readOnly: true`. */
  | 'CF_READ_ONLY'
  /** A call after `close()`. */
  | 'CF_STORE_CLOSED'
  /** A file (or, for the database stores, the database even on a new connection) failed. */
  | 'CF_IO'
  /** A bug caught at the boundary, never the caller's fault. */
  | 'CF_INTERNAL'
  /** The database has no contextfold schema (run `setup()` or `contextfold migrate <url>`), or another application's table or key is where it should be. */
  | 'CF_STORE_SETUP'
  // Loading the addon.
  /** No binary for this platform. */
  | 'CF_NATIVE_MISSING'
  /** The platform package is of another version than contextfold. */
  | 'CF_NATIVE_VERSION'
  /** A binary was found but did not load. */
  | 'CF_NATIVE_LOAD'
  // Compaction and summarizers.
  /** The summarizer failed in a way no other code describes (a bad request, an unexpected answer). */
  | 'CF_SUMMARY_FAILED'
  /** The summarizer answered, but the answer is unusable: empty, cut off (`length`), or an error. */
  | 'CF_INVALID_SUMMARY'
  /** The provider refused the credentials (HTTP 401 / 403). */
  | 'CF_AUTH'
  /** The provider could not be reached (connection refused or reset, DNS, TLS, timeout). */
  | 'CF_NETWORK'
  /** The provider throttled the request or the quota is spent (HTTP 429). */
  | 'CF_RATE_LIMITED'
  /** The provider failed (HTTP 5xx). */
  | 'CF_SERVER'
  /** The summarizer's input is larger than its model accepts. */
  | 'CF_PROMPT_TOO_LONG'
  /** The summarizer cannot call its model: no `ai` package in the app, or a model of another `ai` major. */
  | 'CF_UNSUPPORTED_MODEL'
  /** No catalog entry for the model (or several equally good ones); pass `contextWindow`. */
  | 'CF_UNKNOWN_MODEL'

const CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'CF_INVALID_MESSAGE',
  'CF_INVALID_ARGUMENT',
  'CF_DUPLICATE_ID',
  'CF_NOT_FOUND',
  'CF_ABORTED',
  'CF_UNKNOWN_FORMAT',
  'CF_CORRUPT_SESSION',
  'CF_SESSION_LOCKED',
  'CF_SESSION_NOT_FOUND',
  'CF_READ_ONLY',
  'CF_STORE_CLOSED',
  'CF_IO',
  'CF_INTERNAL',
  'CF_STORE_SETUP',
  'CF_NATIVE_MISSING',
  'CF_NATIVE_VERSION',
  'CF_NATIVE_LOAD',
  'CF_SUMMARY_FAILED',
  'CF_INVALID_SUMMARY',
  'CF_AUTH',
  'CF_NETWORK',
  'CF_RATE_LIMITED',
  'CF_SERVER',
  'CF_PROMPT_TOO_LONG',
  'CF_UNSUPPORTED_MODEL',
  'CF_UNKNOWN_MODEL',
])

/** Marks a `ContextfoldError` across realms and copies of the package (`instanceof` cannot). */
const MARKER = Symbol.for('contextfold.error')

export interface ContextfoldErrorOptions {
  cause?: unknown
  /** HTTP status, when the error came from an HTTP answer. */
  status?: number
  /** The HTTP answer's body (at most a few KB), when there was one. */
  body?: string
}

/** An error of contextfold's TypeScript layer: compaction, the summarizers, the database stores. */
export class ContextfoldError extends Error {
  readonly code: ErrorCode
  readonly status?: number
  readonly body?: string

  constructor(code: ErrorCode, message: string, options: ContextfoldErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'ContextfoldError'
    this.code = code
    if (options.status !== undefined) this.status = options.status
    if (options.body !== undefined) this.body = options.body
    Object.defineProperty(this, MARKER, { value: true })
  }

  /** True for a `ContextfoldError` of any copy of the package; `isContextfoldError` also takes the native errors. */
  static isInstance(e: unknown): e is ContextfoldError {
    return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[MARKER] === true
  }

  /**
   * Whether `compact()` may fall back to the extractive summary after this error. Auth, network,
   * rate-limit and abort errors are not: they say nothing about the summary, so the session is
   * left as it was and the caller may retry later.
   */
  get fallbackAllowed(): boolean {
    return !FATAL.has(this.code)
  }
}

/**
 * True for any error contextfold raised: a `ContextfoldError`, or a native error (an `Error` whose
 * `code` is one of the `CF_*` codes). Safe across realms and copies of the package.
 *
 * @example
 * try { session.append(message) } catch (e) { if (isContextfoldError(e) && e.code === 'CF_DUPLICATE_ID') skip() }
 */
export function isContextfoldError(e: unknown): e is Error & { readonly code: ErrorCode } {
  if (ContextfoldError.isInstance(e)) return true
  const o = asObject(e)
  return !!o && typeof o.message === 'string' && typeof o.code === 'string' && CODES.has(o.code)
}

const FATAL = new Set<ErrorCode>(['CF_ABORTED', 'CF_AUTH', 'CF_NETWORK', 'CF_RATE_LIMITED', 'CF_INVALID_ARGUMENT', 'CF_UNSUPPORTED_MODEL', 'CF_UNKNOWN_MODEL'])

export class SummaryFailedError extends ContextfoldError {
  constructor(message: string, options?: ContextfoldErrorOptions) {
    super('CF_SUMMARY_FAILED', message, options)
    this.name = 'SummaryFailedError'
  }
}

export class InvalidSummaryError extends ContextfoldError {
  constructor(message: string, options?: ContextfoldErrorOptions) {
    super('CF_INVALID_SUMMARY', message, options)
    this.name = 'InvalidSummaryError'
  }
}

/** `name` is `AbortError`, as for every abort in contextfold (and in `fetch`). */
export class AbortError extends ContextfoldError {
  constructor(message = 'The operation was aborted', options?: ContextfoldErrorOptions) {
    super('CF_ABORTED', message, options)
    this.name = 'AbortError'
  }
}

export class AuthError extends ContextfoldError {
  constructor(message: string, options?: ContextfoldErrorOptions) {
    super('CF_AUTH', message, options)
    this.name = 'AuthError'
  }
}

export class NetworkError extends ContextfoldError {
  constructor(message: string, options?: ContextfoldErrorOptions) {
    super('CF_NETWORK', message, options)
    this.name = 'NetworkError'
  }
}

export class RateLimitError extends ContextfoldError {
  constructor(message: string, options?: ContextfoldErrorOptions) {
    super('CF_RATE_LIMITED', message, options)
    this.name = 'RateLimitError'
  }
}

export class ServerError extends ContextfoldError {
  constructor(message: string, options?: ContextfoldErrorOptions) {
    super('CF_SERVER', message, options)
    this.name = 'ServerError'
  }
}

export class PromptTooLongError extends ContextfoldError {
  constructor(message: string, options?: ContextfoldErrorOptions) {
    super('CF_PROMPT_TOO_LONG', message, options)
    this.name = 'PromptTooLongError'
  }
}

export class InvalidArgumentError extends ContextfoldError {
  constructor(message: string, options?: ContextfoldErrorOptions) {
    super('CF_INVALID_ARGUMENT', message, options)
    this.name = 'InvalidArgumentError'
  }
}

/** The summarizer cannot call its model (no `ai` in the app, or a model made for another `ai` major): no fallback hides it. */
export class UnsupportedModelError extends ContextfoldError {
  constructor(message: string, options?: ContextfoldErrorOptions) {
    super('CF_UNSUPPORTED_MODEL', message, options)
    this.name = 'UnsupportedModelError'
  }
}

/** `modelInfo` cannot tell the model's context window: it is not in the catalog, or matches entries of several providers. */
export class UnknownModelError extends ContextfoldError {
  constructor(message: string, options?: ContextfoldErrorOptions) {
    super('CF_UNKNOWN_MODEL', message, options)
    this.name = 'UnknownModelError'
  }
}

/** What providers say when the input is over the model's window (OpenAI, Anthropic, Google, vLLM, Ollama...). */
const PROMPT_TOO_LONG =
  /prompt is too long|prompt too long|context[ _-]length|context[ _-]window|maximum context|context_length_exceeded|too many (input )?tokens|input is too long|input too long|exceeds? the (model'?s? )?(maximum|context|token)|request too large|reduce the length|too large for the model|string_above_max_length|max_tokens_exceeded|token limit/i

/** Error codes of Node's network stack and undici. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
])

type Loose = Record<string, unknown>
const asObject = (e: unknown): Loose | undefined => (typeof e === 'object' && e !== null ? (e as Loose) : undefined)

/** True for any abort: ours, `fetch`'s `DOMException`, Effect's interruption-turned-abort, the native `CF_ABORTED`. */
export function isAbortError(e: unknown): boolean {
  const o = asObject(e)
  return !!o && (o.name === 'AbortError' || o.code === 'CF_ABORTED' || o.code === 'ABORT_ERR')
}

/** The reason an aborted signal carries, as an `AbortError` with code `CF_ABORTED`. */
export function abortError(signal?: AbortSignal): AbortError {
  const reason: unknown = signal?.reason
  if (reason instanceof AbortError) return reason
  const message =
    reason instanceof Error && reason.message && reason.name !== 'AbortError'
      ? `The operation was aborted: ${reason.message}`
      : 'The operation was aborted'
  return new AbortError(message, { cause: reason })
}

export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw abortError(signal)
}

/** Errors wrap errors (AI SDK's `RetryError.lastError`, `fetch`'s `cause`): the chain, outermost first. */
function chain(e: unknown): Loose[] {
  const out: Loose[] = []
  let cur = asObject(e)
  while (cur && out.length < 8 && !out.includes(cur)) {
    out.push(cur)
    cur = asObject(cur.lastError) ?? asObject(cur.cause)
  }
  return out
}

function statusOf(o: Loose): number | undefined {
  for (const v of [o.status, o.statusCode, asObject(o.response)?.status]) {
    if (typeof v === 'number' && Number.isInteger(v) && v >= 100 && v < 600) return v
  }
  return undefined
}

function bodyOf(o: Loose): string | undefined {
  for (const v of [o.body, o.responseBody, asObject(o.error)?.message]) {
    if (typeof v === 'string' && v) return v
  }
  return undefined
}

/** True when an HTTP status and body (or an error message) say the input was too long. */
export function isPromptTooLong(status: number | undefined, text: string): boolean {
  if (status === 413) return true
  if (status !== undefined && status !== 400 && status !== 422) return false
  return PROMPT_TOO_LONG.test(text)
}

/**
 * Turns anything a summarizer threw into a `ContextfoldError` with the right code: aborts, HTTP
 * statuses (`status`, `statusCode`, `response.status`, also inside `cause` / `lastError` chains such
 * as the AI SDK's `RetryError`), network failures (`fetch failed`, `ECONNREFUSED`...) and the
 * providers' "prompt is too long" messages.
 */
export function classifyError(e: unknown): ContextfoldError {
  if (ContextfoldError.isInstance(e)) return e
  if (isAbortError(e)) return new AbortError(undefined, { cause: e })
  const links = chain(e)
  const message = e instanceof Error ? e.message : typeof e === 'string' ? e : 'the summarizer failed'
  let status: number | undefined
  let body: string | undefined
  for (const o of links) {
    status ??= statusOf(o)
    body ??= bodyOf(o)
  }
  const text = [message, body ?? '', ...links.map((o) => (typeof o.message === 'string' ? o.message : ''))].join('\n')
  const opts: ContextfoldErrorOptions = { cause: e }
  if (status !== undefined) opts.status = status
  if (body !== undefined) opts.body = body.slice(0, 4096)
  if (links.some((o) => isAbortError(o))) return new AbortError(undefined, { cause: e })
  if (isPromptTooLong(status, text)) return new PromptTooLongError(message, opts)
  if (status === 401 || status === 403) return new AuthError(message, opts)
  if (status === 429) return new RateLimitError(message, opts)
  if (status !== undefined && status >= 500) return new ServerError(message, opts)
  if (status !== undefined) return new SummaryFailedError(message, opts)
  const networkCode = links.some((o) => typeof o.code === 'string' && NETWORK_CODES.has(o.code))
  const fetchFailed = links.some(
    (o) => o.name === 'TypeError' && typeof o.message === 'string' && /fetch failed|network|socket|terminated/i.test(o.message),
  )
  if (networkCode || fetchFailed) return new NetworkError(message, opts)
  return new SummaryFailedError(message, opts)
}

/**
 * `promise`, or a rejection with the `AbortError` as soon as `signal` fires, whichever comes first
 * (a summarizer or hook that ignores its signal cannot hold an abort up).
 */
export function raceAbort<T>(promise: PromiseLike<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return Promise.resolve(promise)
  if (signal.aborted) {
    Promise.resolve(promise).catch(() => {}) // its late rejection is not ours to report
    return Promise.reject(abortError(signal))
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      Promise.resolve(promise).catch(() => {})
      reject(abortError(signal))
    }
    signal.addEventListener('abort', onAbort, { once: true })
    Promise.resolve(promise).then(
      (v) => {
        signal.removeEventListener('abort', onAbort)
        resolve(v)
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(e)
      },
    )
  })
}
