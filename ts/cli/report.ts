// How the CLI reports a failure: `contextfold: <message>` on one line of stderr (and the error object
// on stdout with `--json`), never a stack trace unless CONTEXTFOLD_DEBUG=1 asks for it.
import type { ImportWarning } from '../native.js'
import { EXIT } from './errors.js'
import { colorsFor } from './format.js'
import { printJson } from './output.js'

/** The `error` object `--json` prints. */
export interface ErrorOutput {
  code: string
  message: string
  exitCode: number
  file?: string
}

/** How many import warnings a command that is not `inspect` writes to stderr. */
const WARNINGS_SHOWN = 20

/**
 * Writes what the import of `file` warned about (input skipped, kept but not sent, ...) to stderr,
 * `contextfold: warning: <file>: line <n>: <message>`, the first few of them.
 */
export function reportWarnings(file: string, warnings: readonly ImportWarning[], color: boolean | undefined): void {
  const c = colorsFor(process.stderr, color)
  for (const w of warnings.slice(0, WARNINGS_SHOWN)) {
    process.stderr.write(`${c.yellow('contextfold: warning:')} ${file}: ${w.line > 0 ? `line ${w.line}: ` : ''}${w.message}\n`)
  }
  if (warnings.length > WARNINGS_SHOWN) {
    process.stderr.write(`${c.yellow('contextfold: warning:')} ${file}: … and ${warnings.length - WARNINGS_SHOWN} more (inspect --json lists them all)\n`)
  }
}

/** Prints `err`; `printedJson`: the command already printed its JSON report. `cause`: for CONTEXTFOLD_DEBUG. */
export function report(err: ErrorOutput, json: boolean, printedJson: boolean, cause?: unknown): void {
  const c = colorsFor(process.stderr, process.argv.includes('--no-color') ? false : undefined)
  process.stderr.write(`${c.red('contextfold:')} ${err.message.replace(/\s*\n\s*/g, ' ')}\n`)
  if (json && !printedJson) printJson({ error: err })
  if (process.env.CONTEXTFOLD_DEBUG) {
    for (let e = cause; e instanceof Error; e = e.cause) if (e.stack) process.stderr.write(`${e.stack}\n`)
  }
}

/**
 * An error no command turned into a `CliError`: the native addon failing to load (its `CF_NATIVE_*`
 * code), a native error with its code, or a bug (`CF_INTERNAL`). Reported with its code; exit 1.
 */
export function reportUnexpected(e: unknown, json: boolean): number {
  const code = typeof (e as { code?: unknown })?.code === 'string' ? (e as { code: string }).code : 'CF_INTERNAL'
  const message = e instanceof Error ? e.message : String(e)
  report({ code, message, exitCode: EXIT.FAILURE }, json, false, e)
  return EXIT.FAILURE
}
