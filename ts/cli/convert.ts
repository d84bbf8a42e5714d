// `contextfold convert <file> --to ...`: a session as contextfold messages (every message, JSON
// lines, or a session store), or its context as AI SDK, Anthropic Messages or OpenAI chat messages.
import { Option, type Command } from 'commander'

import { modelFormats, type ConvertOptions, type ImportWarning, type ModelFormat } from '../native.js'
import { addCommonOptions, countArg, openSession, type CommonFlags, type RunContext } from './common.js'
import { usageError } from './errors.js'
import { reportWarnings } from './report.js'
import { int, plural } from './format.js'
import {
  DEFAULT_OUT_FORMAT,
  messagesJsonl,
  OUT_FORMATS,
  print,
  printJson,
  writeFileAtomic,
  write,
  writeSession,
  type OutFormat,
} from './output.js'

export type Target = 'contextfold' | ModelFormat
export const TARGETS: readonly Target[] = ['contextfold', ...modelFormats()]

export interface ConvertFlags extends CommonFlags {
  to: Target
  out?: string
  outFormat?: OutFormat
  stripMedia?: boolean
  toolOutputMaxChars?: number
}

/** `convert --json --out <file>`. */
export interface ConvertReport {
  file: string
  format: string
  to: Target
  out: string
  /** `--to contextfold`: how the session was written. */
  outFormat?: OutFormat
  /** Messages read. */
  messages: number
  /** Messages written: every message (contextfold), or the provider messages of the context. */
  written: number
  /** What the import warned about: input skipped, or kept but not sent. */
  warnings: ImportWarning[]
}

/** Provider messages of a conversion result (Anthropic's `system` counts as one). */
function providerCount(value: unknown): number {
  if (Array.isArray(value)) return value.length
  const v = value as { system?: unknown; messages?: unknown[] }
  return (v.messages?.length ?? 0) + (v.system ? 1 : 0)
}

export function registerConvert(program: Command, run: (action: (ctx: RunContext) => Promise<void>, flags: CommonFlags) => Promise<void>): void {
  const cmd = program
    .command('convert')
    .description('convert a session: to contextfold messages (all of them), or its context to AI SDK, Anthropic or OpenAI chat messages (JSON)')
    .argument('<file>', 'a transcript, contextfold messages (JSONL), a session store, or a postgres:// or redis:// URL with --session; - reads stdin')
    .addOption(new Option('--to <format>', 'the output format').choices(TARGETS).makeOptionMandatory())
    .option('-o, --out <file>', 'write to this file instead of stdout')
    .addOption(
      new Option('--out-format <format>', '--to contextfold with --out: messages (JSON lines) or store (default: store)').choices(
        OUT_FORMATS,
      ),
    )
    .option('--strip-media', 'provider formats: images and PDFs become [Attached <mime>: <filename>]')
    .option('--tool-output-max-chars <n>', 'provider formats: cut longer tool outputs, keeping head and tail', countArg)
  addCommonOptions(cmd).action(async (file: string, flags: ConvertFlags) => {
    await run(async (ctx) => {
      const to = flags.to
      if (flags.outFormat !== undefined && (to !== 'contextfold' || flags.out === undefined)) {
        throw usageError('--out-format: only with --to contextfold and --out')
      }
      if (to === 'contextfold' && (flags.stripMedia || flags.toolOutputMaxChars !== undefined)) {
        throw usageError('--strip-media and --tool-output-max-chars apply to ai-sdk, anthropic and openai, not contextfold')
      }
      const outFormat = flags.outFormat ?? DEFAULT_OUT_FORMAT

      const { input, session, options } = await openSession(file, flags, ctx)
      ctx.progress.update(`Converting ${file} to ${to}`)
      let written: number
      let data: string | undefined
      let value: unknown
      if (to === 'contextfold') {
        const messages = input.messages
        written = messages.length
        if (flags.out !== undefined) {
          ctx.progress.update(`Writing ${flags.out}`)
          written = writeSession(flags.out, messages, outFormat, options)
        } else if (ctx.json) value = messages
        else data = messagesJsonl(messages)
      } else {
        const opts: ConvertOptions<ModelFormat> = { format: to }
        if (flags.stripMedia) opts.stripMedia = true
        if (flags.toolOutputMaxChars !== undefined) opts.toolOutputMaxChars = flags.toolOutputMaxChars
        value = session.toModelMessages(opts)
        written = providerCount(value)
        if (flags.out !== undefined) {
          ctx.progress.update(`Writing ${flags.out}`)
          writeFileAtomic(flags.out, `${JSON.stringify(value, null, 2)}\n`)
          value = undefined
        }
      }
      ctx.progress.stop()
      // stderr gets nothing but errors with --json: the report of --out lists the warnings.
      if (!ctx.json) reportWarnings(file, input.warnings, flags.color)

      if (flags.out === undefined) {
        if (data !== undefined) write(data)
        else printJson(value)
        return
      }
      if (ctx.json) {
        const report: ConvertReport = { file, format: input.format, to, out: flags.out, messages: input.messages.length, written, warnings: input.warnings }
        if (to === 'contextfold') report.outFormat = outFormat
        printJson(report)
      } else {
        const what = to === 'contextfold' ? (outFormat === 'store' ? 'session store' : 'contextfold messages, JSON lines') : `${to} messages of the context`
        print(`Wrote ${plural(written, 'message')} (${what}) to ${flags.out} ${ctx.colors.dim(`from ${int(input.messages.length)} ${input.format} messages`)}`)
      }
    }, flags)
  })
}
