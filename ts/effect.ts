// contextfold/effect: the compact() pipeline as an Effect service (Effect 4), with tagged errors
// that carry the same `code`s as the promise API's errors, under names of their own.
// `effect` is an optional peer dependency: only this entry point imports it.
import { Context, Data, Effect, Layer } from 'effect'

import type { Session } from './native.js'
import { compact as compactPromise } from './compact.js'
import { classifyError, isAbortError, type ErrorCode } from './errors.js'
import type { CompactOptions, CompactionResult, Summarizer, SummaryRequest, SummaryResponse } from './types.js'

/** The summarizer failed or answered unusably and no fallback was allowed (`fallback: false`). */
export class SummaryFailed extends Data.TaggedError('SummaryFailed')<{
  readonly message: string
  readonly code: ErrorCode
  readonly status?: number
  readonly cause?: unknown
}> {}

/** The compaction's `signal` fired (fiber interruption is reported as interruption, not as this). */
export class Aborted extends Data.TaggedError('Aborted')<{ readonly message: string; readonly code: 'CF_ABORTED'; readonly cause?: unknown }> {}

/** The provider refused the credentials (HTTP 401/403); the session is unchanged. */
export class AuthFailed extends Data.TaggedError('AuthFailed')<{
  readonly message: string
  readonly code: 'CF_AUTH'
  readonly status?: number
  readonly cause?: unknown
}> {}

/** The provider could not be reached; the session is unchanged. */
export class NetworkFailed extends Data.TaggedError('NetworkFailed')<{ readonly message: string; readonly code: 'CF_NETWORK'; readonly cause?: unknown }> {}

/** The provider throttled the request (HTTP 429); the session is unchanged. */
export class RateLimited extends Data.TaggedError('RateLimited')<{
  readonly message: string
  readonly code: 'CF_RATE_LIMITED'
  readonly status?: number
  readonly cause?: unknown
}> {}

/** A bad option or a plan the session rejected (`CF_INVALID_ARGUMENT`, `CF_NOT_FOUND`...). */
export class InvalidArgument extends Data.TaggedError('InvalidArgument')<{
  readonly message: string
  readonly code: ErrorCode
  readonly cause?: unknown
}> {}

export type CompactorError = SummaryFailed | Aborted | AuthFailed | NetworkFailed | RateLimited | InvalidArgument

export interface CompactorService {
  /**
   * `compact()` as an Effect: `compacted` and `skipped` results succeed (a fallback summary is a
   * success with `fallback: true`), a `failed` one fails with its tagged error. Interrupting the
   * fiber aborts the summarizer call and leaves the session exactly as it was.
   */
  readonly compact: (session: Session, options?: CompactOptions) => Effect.Effect<CompactionResult, CompactorError>
}

/** The compaction service. Provide it with `layer({ summarizer, ... })`. */
export class Compactor extends Context.Service<Compactor, CompactorService>()('contextfold/Compactor') {}

/** Native and argument errors: the call itself was wrong (or hit a bug), not the summarizer. */
const ARGUMENT_CODES = new Set<string>(['CF_INVALID_ARGUMENT', 'CF_NOT_FOUND', 'CF_INVALID_MESSAGE', 'CF_DUPLICATE_ID', 'CF_INTERNAL'])

/** A `failed` result or a rejection, as the tagged error for it. */
export function toTaggedError(e: unknown): CompactorError {
  if (isAbortError(e)) return new Aborted({ message: e instanceof Error ? e.message : 'aborted', code: 'CF_ABORTED', cause: e })
  const code = (e as { code?: unknown } | null)?.code
  if (typeof code === 'string' && ARGUMENT_CODES.has(code)) {
    return new InvalidArgument({ message: e instanceof Error ? e.message : String(e), code: code as ErrorCode, cause: e })
  }
  const err = classifyError(e)
  const base = { message: err.message, cause: err }
  const status = err.status !== undefined ? { status: err.status } : {}
  switch (err.code) {
    case 'CF_ABORTED':
      return new Aborted({ ...base, code: err.code })
    case 'CF_AUTH':
      return new AuthFailed({ ...base, ...status, code: err.code })
    case 'CF_NETWORK':
      return new NetworkFailed({ ...base, code: err.code })
    case 'CF_RATE_LIMITED':
      return new RateLimited({ ...base, ...status, code: err.code })
    case 'CF_INVALID_ARGUMENT':
      return new InvalidArgument({ ...base, code: err.code })
    default:
      return new SummaryFailed({ ...base, ...status, code: err.code })
  }
}


function withSignals(a: AbortSignal, b?: AbortSignal): AbortSignal {
  return b ? AbortSignal.any([a, b]) : a
}

/** The service, with `defaults` under every call's options (`summarizer`, `template`, `hooks`...). */
export function make(defaults: CompactOptions = {}): CompactorService {
  return {
    compact: (session, options = {}) =>
      Effect.tryPromise({
        try: (signal) => compactPromise(session, { ...defaults, ...options, signal: withSignals(signal, options.signal ?? defaults.signal) }),
        catch: toTaggedError,
      }).pipe(
        Effect.flatMap((result) =>
          result.status === 'failed' ? Effect.fail(toTaggedError(result.error ?? new Error(result.reason))) : Effect.succeed(result),
        ),
      ),
  }
}

/** A layer providing `Compactor` with these defaults. */
export function layer(defaults: CompactOptions = {}): Layer.Layer<Compactor> {
  return Layer.succeed(Compactor, make(defaults))
}

/** Compacts `session` with the `Compactor` in context (the Effect flavour of `compact`). */
export function compactEffect(session: Session, options?: CompactOptions): Effect.Effect<CompactionResult, CompactorError, Compactor> {
  return Effect.flatMap(Compactor, (c) => c.compact(session, options))
}

/** A promise `Summarizer` from an Effect one (run with `Effect.runPromise`, interrupted by the signal). */
export function summarizerFromEffect(
  summarize: (req: SummaryRequest) => Effect.Effect<SummaryResponse, unknown>,
): Summarizer {
  return (req, signal) => Effect.runPromise(summarize(req), signal ? { signal } : undefined)
}
