#!/usr/bin/env node
// contextfold CLI: inspect, compact and convert agent sessions. See docs/guides/cli.md.
// The commands (and with them the native addon) load only once a failure can be reported: one line
// with a code and a non-zero exit, never a raw stack trace (CONTEXTFOLD_DEBUG=1 adds it), including
// for an addon with no binary for this platform and for errors outside any command.
import { reportUnexpected } from './cli/report.js'

const json = process.argv.slice(2).includes('--json')
// A module that fails to load can reach both the catch below and `unhandledRejection`: report it once.
let reported: { error: unknown; code: number } | undefined
function fail(e: unknown): number {
  if (reported === undefined || reported.error !== e) reported = { error: e, code: reportUnexpected(e, json) }
  return reported.code
}
process.on('uncaughtException', (e) => process.exit(fail(e)))
process.on('unhandledRejection', (e) => process.exit(fail(e)))

try {
  const { main } = await import('./cli/main.js')
  process.exitCode = await main()
} catch (e) {
  process.exitCode = fail(e)
}
