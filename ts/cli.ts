#!/usr/bin/env node
// contextfold CLI: inspect, compact and convert agent sessions. See the README's CLI section.
//   0 ok · 1 operational failure · 2 bad usage · 3 unreadable or unrecognised input · 130 interrupted
import { createRequire } from 'node:module'

import { Command, CommanderError } from 'commander'

import { isAbortError } from './errors.js'
import { runContext, type CommonFlags, type RunContext } from './cli/common.js'
import { registerCompact } from './cli/compact.js'
import { registerConvert } from './cli/convert.js'
import { CliError, EXIT } from './cli/errors.js'
import { colorsFor } from './cli/format.js'
import { registerInspect } from './cli/inspect.js'
import { printJson, watchStdout } from './cli/output.js'

const EXIT_CODES_HELP = `
Exit codes:
  0    done
  1    operational failure (the summarizer failed, an output file could not be written)
  2    bad usage (unknown command or option, missing or invalid argument)
  3    the input file is missing, unreadable, or not a format contextfold reads
  130  interrupted (Ctrl-C)`

function version(): string {
  try {
    return (createRequire(import.meta.url)('../package.json') as { version: string }).version
  } catch {
    return 'unknown'
  }
}

interface ErrorOutput {
  code: string
  message: string
  exitCode: number
  file?: string
}

function report(err: ErrorOutput, json: boolean, printedJson: boolean): void {
  const c = colorsFor(process.stderr, process.argv.includes('--no-color') ? false : undefined)
  process.stderr.write(`${c.red('contextfold:')} ${err.message}\n`)
  if (json && !printedJson) printJson({ error: err })
}

/** Runs the CLI with `argv` (as `process.argv`); resolves to the exit code. */
async function main(argv: string[] = process.argv): Promise<number> {
  watchStdout()
  const json = argv.slice(2).includes('--json')
  const controller = new AbortController()
  let interrupted = false
  const onSigint = () => {
    if (interrupted) process.exit(EXIT.INTERRUPTED)
    interrupted = true
    controller.abort(new Error('interrupted'))
  }
  process.on('SIGINT', onSigint)

  const program = new Command('contextfold')
  program
    .description('Inspect, compact and convert coding-agent sessions (Claude Code, Codex, pi, opencode, ... and contextfold sessions).')
    .version(version(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .exitOverride()
    .configureOutput({ outputError: (str, write) => write(str.replace(/^error: /, 'contextfold: ')) })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', EXIT_CODES_HELP)

  const run = async (action: (ctx: RunContext) => Promise<void>, flags: CommonFlags): Promise<void> => {
    const ctx = runContext(flags, controller.signal)
    try {
      await action(ctx)
    } finally {
      ctx.progress.stop()
    }
  }
  registerInspect(program, run)
  registerCompact(program, run)
  registerConvert(program, run)
  for (const cmd of program.commands) cmd.addHelpText('after', EXIT_CODES_HELP)

  try {
    await program.parseAsync(argv)
    return EXIT.OK
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.exitCode === 0) return EXIT.OK // --help, --version
      // Commander has printed its message (and the hint) to stderr.
      if (json) printJson({ error: { code: 'CF_USAGE', message: e.message.replace(/^error: /, ''), exitCode: EXIT.USAGE } })
      return EXIT.USAGE
    }
    if (controller.signal.aborted && isAbortError(e)) {
      report({ code: 'CF_ABORTED', message: 'interrupted', exitCode: EXIT.INTERRUPTED }, json, false)
      return EXIT.INTERRUPTED
    }
    if (e instanceof CliError) {
      const err: ErrorOutput = { code: e.code, message: e.message, exitCode: e.exitCode }
      if (e.file !== undefined) err.file = e.file
      report(err, json, e.reported)
      return e.exitCode
    }
    const code = typeof (e as { code?: unknown })?.code === 'string' ? (e as { code: string }).code : 'CF_INTERNAL'
    const message = e instanceof Error ? e.message : String(e)
    report({ code, message, exitCode: EXIT.FAILURE }, json, false)
    if (process.env.CONTEXTFOLD_DEBUG && e instanceof Error && e.stack) process.stderr.write(`${e.stack}\n`)
    return EXIT.FAILURE
  } finally {
    process.off('SIGINT', onSigint)
  }
}

process.exitCode = await main()
