// `contextfold compact <file>`: runs the compaction pipeline on a session (offline extractive
// summarizer by default, or any OpenAI-compatible endpoint) and shows before / after figures and the
// summary; `--out` writes the compacted session.
import { Option, type Command } from 'commander'

import type { ContextUsage, PruneResult } from '../native.js'
import { compact } from '../compact.js'
import { extractiveSummarizer } from '../summarizers/extractive.js'
import { openAICompatibleSummarizer } from '../summarizers/openai-compatible.js'
import type { CompactionResult, Summarizer } from '../types.js'
import { TEMPLATE_NAMES, type TemplateName } from '../templates.js'
import { addCommonOptions, addOverheadOptions, openSession, type CommonFlags, type RunContext } from './common.js'
import { CliError, EXIT, usageError } from './errors.js'
import { int, plural, table } from './format.js'
import { DEFAULT_OUT_FORMAT, OUT_FORMATS, print, printJson, writeSession, type OutFormat } from './output.js'

export const SUMMARIZERS = ['extractive', 'openai-compatible'] as const
export type SummarizerName = (typeof SUMMARIZERS)[number]

export interface CompactFlags extends CommonFlags {
  summarizer: SummarizerName
  baseUrl?: string
  model?: string
  apiKey?: string
  template: TemplateName
  focus?: string
  out?: string
  outFormat?: OutFormat
  /** `--no-continue`. */
  continue?: boolean
  /** `--no-fallback`. */
  fallback?: boolean
  prune?: boolean
  ifOverflow?: boolean
}

interface Figures {
  tokens: number
  usable: number
  pressure: number
  tier: ContextUsage['tier']
  /** Messages in the context. */
  messages: number
}

/** `compact --json`. */
export interface CompactReport {
  file: string
  format: string
  status: CompactionResult['status']
  fallback: boolean
  reason?: string
  error?: { code: string; message: string; status?: number }
  summarizer: { name: SummarizerName; model?: string; baseURL?: string }
  template: TemplateName
  before: Figures
  after: Figures
  pruned?: { tokensFreed: number; parts: number }
  summarized?: { messages: number; tokens: number; tailStartID?: string; readFiles: string[]; modifiedFiles: string[] }
  summary?: string
  out?: { path: string; format: OutFormat; messages: number }
}

interface SummarizerChoice {
  summarizer: Summarizer
  info: CompactReport['summarizer']
}

/** The summarizer the flags ask for; bad or missing flags are usage errors (exit 2). */
export function chooseSummarizer(flags: CompactFlags, env: NodeJS.ProcessEnv = process.env): SummarizerChoice {
  if (flags.summarizer === 'extractive') {
    const extra = [flags.baseUrl && '--base-url', flags.model && '--model', flags.apiKey && '--api-key'].filter(Boolean)
    if (extra.length) throw usageError(`${extra.join(', ')}: only with --summarizer openai-compatible`)
    return { summarizer: extractiveSummarizer(), info: { name: 'extractive' } }
  }
  const missing = [!flags.baseUrl && '--base-url', !flags.model && '--model'].filter(Boolean)
  if (missing.length) throw usageError(`--summarizer openai-compatible needs ${missing.join(' and ')}`)
  const baseURL = flags.baseUrl!
  let url: URL
  try {
    url = new URL(baseURL)
  } catch {
    throw usageError(`--base-url: not a URL: ${JSON.stringify(baseURL)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`--base-url: expected an http(s) URL, got ${JSON.stringify(baseURL)}`)
  const apiKey = flags.apiKey ?? (env.CONTEXTFOLD_API_KEY || undefined) ?? (env.OPENAI_API_KEY || undefined)
  const summarizer = openAICompatibleSummarizer({ baseURL, model: flags.model!, ...(apiKey ? { apiKey } : {}) })
  return { summarizer, info: { name: 'openai-compatible', model: flags.model!, baseURL } }
}

function figures(usage: ContextUsage, messages: number): Figures {
  return { tokens: usage.tokens, usable: usage.usable, pressure: usage.pressure, tier: usage.tier, messages }
}

export async function runCompact(file: string, flags: CompactFlags, ctx: RunContext): Promise<CompactReport> {
  const chosen = chooseSummarizer(flags)
  if (flags.outFormat !== undefined && flags.out === undefined) throw usageError('--out-format: only with --out')
  const outFormat = flags.outFormat ?? DEFAULT_OUT_FORMAT

  const { input, session, options } = await openSession(file, flags, ctx)
  const before = figures(session.usage(), session.context().length)

  let pruned: PruneResult | undefined
  if (flags.prune) pruned = session.prune()

  let result: CompactionResult
  if (flags.ifOverflow && !session.isOverflow()) {
    const u = session.usage()
    result = { status: 'skipped', fallback: false, reason: `the context does not overflow (${int(u.tokens)} of ${int(u.usable)} usable tokens)`, tokensBefore: u.tokens }
  } else {
    const what = chosen.info.name === 'extractive' ? 'the extractive summarizer' : `${chosen.info.model} at ${chosen.info.baseURL}`
    let calls = 0
    // The extractive summarizer is used as it is: compact() recognises it (one call, no split turn).
    const summarizer: Summarizer =
      chosen.info.name === 'extractive'
        ? chosen.summarizer
        : (req, signal) => {
            calls++
            if (calls > 1 || req.kind === 'turn-prefix') {
              ctx.progress.update(`Summarizing with ${what} (call ${calls}${req.kind === 'turn-prefix' ? ', turn prefix' : ''})`)
            }
            return chosen.summarizer(req, signal)
          }
    ctx.progress.update(`Planning the compaction of ${file}`)
    result = await compact(session, {
      summarizer,
      template: flags.template,
      signal: ctx.signal,
      autoContinue: flags.continue !== false,
      fallback: flags.fallback !== false,
      ...(flags.focus ? { focus: flags.focus } : {}),
      ...(flags.ifOverflow ? { auto: true } : {}),
      hooks: {
        beforeCompact: ({ plan }) => {
          ctx.progress.update(
            `Summarizing ${plural(plan.summarizedIDs.length, 'message')} (${int(plan.tokensSummarized)} tokens) with ${what}`,
          )
        },
      },
    })
  }

  const report: CompactReport = {
    file,
    format: input.format,
    status: result.status,
    fallback: result.fallback,
    summarizer: chosen.info,
    template: flags.template,
    before,
    after: figures(session.usage(), session.context().length),
  }
  if (result.reason) report.reason = result.reason
  if (result.error) {
    report.error = { code: result.error.code, message: result.error.message }
    if (result.error.status !== undefined) report.error.status = result.error.status
  }
  if (pruned) report.pruned = { tokensFreed: pruned.tokensFreed, parts: pruned.prunedPartIDs.length }
  const plan = result.plan
  if (plan && result.status === 'compacted') {
    report.summarized = {
      messages: plan.summarizedIDs.length,
      tokens: plan.tokensSummarized,
      readFiles: plan.readFiles,
      modifiedFiles: plan.modifiedFiles,
    }
    if (plan.tailStartID !== undefined) report.summarized.tailStartID = plan.tailStartID
  }
  if (result.summary !== undefined) report.summary = result.summary

  if (flags.out !== undefined && result.status !== 'failed') {
    ctx.progress.update(`Writing ${flags.out}`)
    const n = writeSession(flags.out, session.messages(), outFormat, options)
    report.out = { path: flags.out, format: outFormat, messages: n }
  }
  return report
}

export function renderCompact(r: CompactReport, ctx: RunContext): string[] {
  const c = ctx.colors
  const out: string[] = []
  const by = r.summarizer.name === 'extractive' ? 'the extractive summarizer' : `${r.summarizer.model} (${r.summarizer.baseURL})`
  const status =
    r.status === 'compacted' ? c.green('compacted') : r.status === 'skipped' ? c.yellow('skipped') : c.red('failed')
  out.push(`${c.bold(r.file)}: ${status} ${c.dim(`with ${by}, ${r.template} template`)}`)
  if (r.status === 'skipped' && r.reason) out.push(`  ${r.reason}`)
  if (r.status === 'failed') {
    out.push(`  ${c.red(r.reason ?? 'unknown error')}`, '  the session is unchanged')
    return out
  }
  if (r.fallback && r.reason) out.push(`  ${c.yellow(`the summarizer failed: ${r.reason}`)}`)

  const tier = (f: Figures) => {
    const color = f.tier === 'compact' ? c.red : f.tier === 'ok' ? c.green : c.yellow
    return color(`${f.pressure.toFixed(2)} ${f.tier}`)
  }
  const arrow = c.dim('→')
  out.push(
    ...table(
      [
        ['', c.dim('before'), '', c.dim('after')],
        ['tokens', int(r.before.tokens), arrow, int(r.after.tokens)],
        ['messages in context', int(r.before.messages), arrow, int(r.after.messages)],
        ['pressure', tier(r.before), arrow, tier(r.after)],
      ],
      new Set([1, 3]),
    ),
  )
  if (r.pruned) out.push(`  pruned ${plural(r.pruned.parts, 'tool output')} (${int(r.pruned.tokensFreed)} tokens) first`)
  if (r.summarized) {
    const kept = r.summarized.tailStartID ? `; kept the rest verbatim from ${r.summarized.tailStartID}` : '; kept nothing verbatim'
    out.push(`  summarized ${plural(r.summarized.messages, 'message')} (${int(r.summarized.tokens)} tokens)${kept}`)
  }
  if (r.summary !== undefined) {
    out.push('', c.bold('Summary'))
    for (const line of r.summary.split('\n')) out.push(line ? `  ${line}` : '')
  }
  if (r.out) out.push('', `Wrote ${plural(r.out.messages, 'message')} to ${r.out.path} ${c.dim(`(${r.out.format === 'store' ? 'session store' : 'messages, JSON lines'})`)}`)
  return out
}

export function registerCompact(program: Command, run: (action: (ctx: RunContext) => Promise<void>, flags: CommonFlags) => Promise<void>): void {
  const cmd = program
    .command('compact')
    .description('compact a session: summarize the history before the verbatim tail, show before/after figures and the summary')
    .argument('<file>', 'a transcript, contextfold messages (JSONL), a session store, or a postgres:// or redis:// URL with --session; - reads stdin')
    .addOption(new Option('--summarizer <name>', 'who writes the summary').choices(SUMMARIZERS).default('extractive'))
    .option('--base-url <url>', 'openai-compatible: the API base URL (…/v1; /chat/completions is appended)')
    .option('--model <id>', 'openai-compatible: the model that writes the summary')
    .option('--api-key <key>', 'openai-compatible: the API key (default: $CONTEXTFOLD_API_KEY, then $OPENAI_API_KEY)')
    .addOption(new Option('--template <name>', 'the summary template').choices(TEMPLATE_NAMES).default('anchored'))
    .option('--focus <text>', 'what the summary should concentrate on')
    .option('--prune', 'prune old tool output before compacting')
    .option('--if-overflow', 'compact only when the context overflows the window (recorded as automatic)')
    .option('--no-continue', "don't append the synthetic \"Continue if you have next steps...\" message")
    .option('--no-fallback', 'fail (exit 1) instead of using the extractive summary when the summarizer fails')
    .option('-o, --out <file>', 'write the compacted session (every message, hidden ones included) to this file')
    .addOption(new Option('--out-format <format>', 'how --out writes: messages (JSON lines) or store (default: store)').choices(OUT_FORMATS))
  addOverheadOptions(addCommonOptions(cmd)).action(async (file: string, flags: CompactFlags) => {
    await run(async (ctx) => {
      const report = await runCompact(file, flags, ctx)
      ctx.progress.stop()
      if (ctx.json) printJson(report)
      else for (const line of renderCompact(report, ctx)) print(line)
      if (report.status === 'failed') {
        throw new CliError(EXIT.FAILURE, report.error?.code ?? 'CF_SUMMARY_FAILED', `${file}: compaction failed: ${report.reason ?? 'unknown error'}`, {
          file,
          reported: true,
        })
      }
    }, flags)
  })
}
