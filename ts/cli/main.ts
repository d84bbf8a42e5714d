// The CLI's commands and how their failures end: an exit code and one line on stderr.
//   0 ok · 1 operational failure · 2 bad usage · 3 unreadable or unrecognised input · 130 interrupted
import { Command, CommanderError } from 'commander'

import { isAbortError } from '../errors.js'
import { runContext, version, type CommonFlags, type RunContext } from './common.js'
import { registerCompact } from './compact.js'
import { registerConvert } from './convert.js'
import { CliError, EXIT } from './errors.js'
import { registerInspect } from './inspect.js'
import { registerMigrate } from './migrate.js'
import { registerView } from './view/command.js'
import { printJson, watchStdout } from './output.js'
import { report, reportUnexpected, type ErrorOutput } from './report.js'

const EXIT_CODES_HELP = `
Exit codes:
  0    done
  1    operational failure (the summarizer failed, an output file could not be written)
  2    bad usage (unknown command or option, missing or invalid argument)
  3    the input file is missing, unreadable, or not a format contextfold reads
  130  interrupted (Ctrl-C)`

/** Runs the CLI with `argv` (as `process.argv`); resolves to the exit code. */
export async function main(argv: string[] = process.argv): Promise<number> {
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
    .description('Inspect, view, compact and convert coding-agent sessions (Claude Code, Codex, pi, opencode, ... and contextfold sessions).')
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
  registerView(program, run)
  registerMigrate(program, run)
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
      report(err, json, e.reported, e)
      return e.exitCode
    }
    return reportUnexpected(e, json)
  } finally {
    process.off('SIGINT', onSigint)
  }
}
