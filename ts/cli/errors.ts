// Exit codes of the CLI and the error that carries one.

/** Exit codes: documented in the README's CLI section. */
export const EXIT = {
  /** Done. */
  OK: 0,
  /** Operational failure: the summarizer failed, an output file could not be written, ... */
  FAILURE: 1,
  /** Bad usage: unknown command or option, a missing or invalid argument. */
  USAGE: 2,
  /** The input file is missing, unreadable, or not in a format contextfold reads. */
  INPUT: 3,
  /** Interrupted (Ctrl-C), as shells report SIGINT. */
  INTERRUPTED: 130,
} as const

export type ExitCode = (typeof EXIT)[keyof typeof EXIT]

/** An error the CLI reports as `contextfold: <message>` and exits with `exitCode`. */
export class CliError extends Error {
  readonly exitCode: ExitCode
  /** A stable code: the native or TypeScript layer's (`CF_NOT_FOUND`, `CF_AUTH`...) or the CLI's own. */
  readonly code: string
  /** The file the error is about, when there is one. */
  readonly file?: string
  /** The command already printed its JSON report: `--json` adds no error object to stdout. */
  readonly reported: boolean

  constructor(
    exitCode: ExitCode,
    code: string,
    message: string,
    options: { file?: string; cause?: unknown; reported?: boolean } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'CliError'
    this.exitCode = exitCode
    this.code = code
    this.reported = options.reported === true
    if (options.file !== undefined) this.file = options.file
  }
}

export function usageError(message: string): CliError {
  return new CliError(EXIT.USAGE, 'CF_USAGE', message)
}

/** Codes of errors about the input file: exit code 3. */
const INPUT_CODES = new Set([
  'CF_NOT_FOUND',
  'CF_IO',
  'CF_UNKNOWN_FORMAT',
  'CF_CORRUPT_SESSION',
  'CF_SESSION_NOT_FOUND',
  'CF_INVALID_MESSAGE',
  'CF_DUPLICATE_ID',
])

function codeOf(e: unknown): string | undefined {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined
  return typeof code === 'string' ? code : undefined
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e)
}

/**
 * An error raised while reading `file` (by the importer, the store, or `Session.fromMessages`),
 * as a `CliError` that names the file and the problem.
 */
export function inputError(file: string, e: unknown): CliError {
  if (e instanceof CliError) return e
  const detail = messageOf(e)
  const code = codeOf(e)
  // Native errors always carry a code: anything else is a bug, not a problem with the file.
  if (code === undefined) return new CliError(EXIT.FAILURE, 'CF_INTERNAL', `${file}: ${detail}`, { file, cause: e })
  const problem = (() => {
    switch (code) {
      case 'CF_NOT_FOUND':
      case 'CF_SESSION_NOT_FOUND':
        return /^[a-z]+:\/\//i.test(file) ? 'no such session' : 'no such file'
      case 'CF_UNKNOWN_FORMAT':
        // The importer's hint names its API option; here the option is the CLI's flag.
        return `not a transcript or session contextfold can read (${detail.replace(/pass `format` explicitly/, 'pass --format <format> to read it as one')})`
      case 'CF_CORRUPT_SESSION':
        return `corrupt session store: ${detail} (--recover skips corrupt lines)`
      case 'CF_INVALID_MESSAGE':
      case 'CF_DUPLICATE_ID':
        return `invalid message: ${detail}`
      case 'CF_SESSION_LOCKED':
        return detail
      default:
        return `cannot be read: ${detail}`
    }
  })()
  const exit = INPUT_CODES.has(code) ? EXIT.INPUT : EXIT.FAILURE
  return new CliError(exit, code, `${file}: ${problem}`, { file, cause: e })
}

/** An error from Node's file system while reading `file` (ENOENT, EISDIR, EACCES...). */
export function fsInputError(file: string, e: unknown): CliError {
  const errno = codeOf(e)
  if (errno === 'ENOENT') return new CliError(EXIT.INPUT, 'CF_NOT_FOUND', `${file}: no such file`, { file, cause: e })
  if (errno === 'EISDIR') return new CliError(EXIT.INPUT, 'CF_IO', `${file}: is a directory`, { file, cause: e })
  return new CliError(EXIT.INPUT, 'CF_IO', `${file}: cannot be read: ${messageOf(e)}`, { file, cause: e })
}

/** An error while writing the output file. */
export function outputError(file: string, e: unknown): CliError {
  if (e instanceof CliError) return e
  const code = codeOf(e)
  const detail = messageOf(e)
  return new CliError(EXIT.FAILURE, code?.startsWith('CF_') ? code : 'CF_IO', `${file}: cannot write: ${detail}`, { file, cause: e })
}
