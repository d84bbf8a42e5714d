// Errors of the TypeScript layer: each an `Error` with a stable `code`, like the native ones.

/** Stable codes of the errors `compact()` and the summarizers raise. */
export type CompactErrorCode =
  /** The summarizer failed in a way no other code describes (a bad request, an unexpected answer). */
  | 'CF_SUMMARY_FAILED'
  /** The summarizer answered, but the answer is unusable: empty, cut off (`length`), or an error. */
  | 'CF_INVALID_SUMMARY'
  /** An `AbortSignal` fired; `name` is `AbortError`. */
  | 'CF_ABORTED'
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
  /** A bad option (e.g. `replay` naming a message that is not a user message). */
  | 'CF_INVALID_ARGUMENT'
  /** The summarizer cannot call its model: no `ai` package in the app, or a model of another `ai` major. */
  | 'CF_UNSUPPORTED_MODEL'
  /** `modelInfo` found no catalog entry for the model (or several equally good ones); pass `contextWindow`. */
  | 'CF_UNKNOWN_MODEL'

export interface CompactErrorOptions {
  cause?: unknown
  /** HTTP status, when the error came from an HTTP answer. */
  status?: number
  /** The HTTP answer's body (at most a few KB), when there was one. */
  body?: string
}

/** Base class: every error of the TypeScript layer is a `CompactError` with a stable `code`. */
export class CompactError extends Error {
  readonly code: CompactErrorCode
  readonly status?: number
  readonly body?: string

  constructor(code: CompactErrorCode, message: string, options: CompactErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'CompactError'
    this.code = code
    if (options.status !== undefined) this.status = options.status
    if (options.body !== undefined) this.body = options.body
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

const FATAL = new Set<CompactErrorCode>(['CF_ABORTED', 'CF_AUTH', 'CF_NETWORK', 'CF_RATE_LIMITED', 'CF_INVALID_ARGUMENT', 'CF_UNSUPPORTED_MODEL', 'CF_UNKNOWN_MODEL'])

export class SummaryFailedError extends CompactError {
  constructor(message: string, options?: CompactErrorOptions) {
    super('CF_SUMMARY_FAILED', message, options)
    this.name = 'SummaryFailedError'
  }
}

export class InvalidSummaryError extends CompactError {
  constructor(message: string, options?: CompactErrorOptions) {
    super('CF_INVALID_SUMMARY', message, options)
    this.name = 'InvalidSummaryError'
  }
}

/** `name` is `AbortError`, as for every abort in contextfold (and in `fetch`). */
export class AbortError extends CompactError {
  constructor(message = 'The operation was aborted', options?: CompactErrorOptions) {
    super('CF_ABORTED', message, options)
    this.name = 'AbortError'
  }
}

export class AuthError extends CompactError {
  constructor(message: string, options?: CompactErrorOptions) {
    super('CF_AUTH', message, options)
    this.name = 'AuthError'
  }
}

export class NetworkError extends CompactError {
  constructor(message: string, options?: CompactErrorOptions) {
    super('CF_NETWORK', message, options)
    this.name = 'NetworkError'
  }
}

export class RateLimitError extends CompactError {
  constructor(message: string, options?: CompactErrorOptions) {
    super('CF_RATE_LIMITED', message, options)
    this.name = 'RateLimitError'
  }
}

export class ServerError extends CompactError {
  constructor(message: string, options?: CompactErrorOptions) {
    super('CF_SERVER', message, options)
    this.name = 'ServerError'
  }
}

export class PromptTooLongError extends CompactError {
  constructor(message: string, options?: CompactErrorOptions) {
    super('CF_PROMPT_TOO_LONG', message, options)
    this.name = 'PromptTooLongError'
  }
}

export class InvalidArgumentError extends CompactError {
  constructor(message: string, options?: CompactErrorOptions) {
    super('CF_INVALID_ARGUMENT', message, options)
    this.name = 'InvalidArgumentError'
  }
}

/** The summarizer cannot call its model (no `ai` in the app, or a model made for another `ai` major): no fallback hides it. */
export class UnsupportedModelError extends CompactError {
  constructor(message: string, options?: CompactErrorOptions) {
    super('CF_UNSUPPORTED_MODEL', message, options)
    this.name = 'UnsupportedModelError'
  }
}

/** `modelInfo` cannot tell the model's context window: it is not in the catalog, or matches entries of several providers. */
export class UnknownModelError extends CompactError {
  constructor(message: string, options?: CompactErrorOptions) {
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
 * Turns anything a summarizer threw into a `CompactError` with the right code: aborts, HTTP
 * statuses (`status`, `statusCode`, `response.status`, also inside `cause` / `lastError` chains such
 * as the AI SDK's `RetryError`), network failures (`fetch failed`, `ECONNREFUSED`...) and the
 * providers' "prompt is too long" messages.
 */
export function classifyError(e: unknown): CompactError {
  if (e instanceof CompactError) return e
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
  const opts: CompactErrorOptions = { cause: e }
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
