// `contextfold inspect <file>`: what a session holds and how full its context is, by kind; the
// largest tool outputs; what prune would free; where a compaction would cut; import warnings.
import { turns } from '../native.js'
import type { Breakdown, ContextUsage, ImportStats, ImportWarning, Message, Session, SessionOptions, ToolOutputSize } from '../native.js'
import { addCommonOptions, addOverheadOptions, addPriceOptions, countArg, openSession, type CallOverhead, type CommonFlags, type RunContext } from './common.js'
import { renderBar, renderLegend } from './context-bar.js'
import { breakdownTotal, segments } from './segments.js'
import { int, pct, plural, snippet, table } from './format.js'
import { print, printJson } from './output.js'
import type { Command } from 'commander'

export interface InspectFlags extends CommonFlags {
  top?: number
}

export interface ToolCallCounts {
  total: number
  completed: number
  error: number
  /** Never answered (`pending` / `running`). */
  pending: number
  /** Output already cleared by a prune. */
  pruned: number
}

/** `inspect --json`. */
export interface InspectReport {
  file: string
  format: string
  messages: { total: number; context: number }
  turns: { total: number; context: number }
  toolCalls: ToolCallCounts
  /** Summary messages in the history. */
  compactions: number
  options: SessionOptions
  window: { context: number; output?: number; usable: number }
  /**
   * What the model is sent with the next request, counted locally as the AI SDK middleware counts
   * it (`setOverhead`): the context's messages (`localTokens`), the system prompt and the tool
   * definitions, from `--system` / `--tools` or else from the transcript when it records them
   * (`source`). `usage` counts the system prompt and tools too, until a provider report covers them.
   */
  sent: { tokens: number; messages: number; system: number; tools: number; source: CallOverhead['source'] }
  usage: ContextUsage
  breakdown: Breakdown
  /** The breakdown's sum: the local count of the context. */
  localTokens: number
  largestToolOutputs: ToolOutputSize[]
  /** What `prune()` would do now (the dry run the cost line weighs, with the usage it leaves). */
  prune: { tokensFreed: number; parts: number; messages: number; tokensAfter: number }
  /**
   * USD with the provider's prompt cache (`decidePrune`): the next request as the context stands,
   * a prune now (what the requests that follow save, what breaking the cache costs, whether the
   * default policy would prune), one compaction, and where the default policy compacts (the
   * cheapest threshold: whether it is due, and whether it waits for the model to read the newest
   * step). `priced` says where the prices come from.
   */
  cost: {
    priced: 'options' | 'model' | 'relative'
    warm: boolean
    nextRequest: number
    prune: { saving: number; cost: number; pays: boolean }
    compaction: number
    compactAt: { tokens: number; due: boolean; waits: boolean }
  }
  /** Where a compaction would cut now (`select()`): the head is summarized, the tail kept verbatim. */
  cut: {
    overflow: boolean
    headEnd: number
    headMessages: number
    headTokens: number
    tailMessages: number
    tailTokens: number
    tailStartID?: string
  }
  stats?: ImportStats
  warnings: ImportWarning[]
}

export function countToolCalls(messages: readonly Message[]): ToolCallCounts {
  const out: ToolCallCounts = { total: 0, completed: 0, error: 0, pending: 0, pruned: 0 }
  for (const m of messages) {
    for (const p of m.parts) {
      if (p.type !== 'tool') continue
      const state = (p as { state?: { status?: string; compactedAt?: number } }).state
      out.total++
      if (state?.status === 'completed') out.completed++
      else if (state?.status === 'error') out.error++
      else out.pending++
      if (state?.compactedAt !== undefined) out.pruned++
    }
  }
  return out
}

/** What a message starts with, for a one-line preview: its text, else its first tool call or reasoning. */
function preview(m: Message): string {
  const text = m.parts.find((p) => p.type === 'text' && typeof p.text === 'string' && p.text.trim())
  if (text) return JSON.stringify(snippet((text as { text: string }).text, 50))
  const tool = m.parts.find((p) => p.type === 'tool')
  if (tool) return `${String((tool as { tool?: unknown }).tool)} call`
  return m.parts.some((p) => p.type === 'reasoning') ? 'reasoning' : String(m.parts[0]?.type ?? 'empty')
}

/** The report, with the session it was made from (its `messages()`: every message, hidden ones included). */
export interface Inspected {
  report: InspectReport
  /** What the model sees. */
  context: Message[]
  session: Session
}

export async function inspectReport(file: string, flags: InspectFlags, ctx: RunContext): Promise<Inspected> {
  const { input, session, overhead } = await openSession(file, flags, ctx)
  ctx.progress.update(`Inspecting ${file}`)
  const usage = session.usage()
  const breakdown = session.breakdown()
  const context = session.context()
  const sel = session.select()
  const options = session.options

  ctx.progress.update(`Weighing a prune of ${file}`)
  // One dry run serves the prune preview and the cost line; it says the usage the prune leaves.
  // Weighed as the default policy weighs it: the next compaction at the cheapest threshold.
  const decision = session.decidePrune({ threshold: 'cost' })
  const pruned = decision.result

  const localTokens = breakdownTotal(breakdown)
  const headTokens = Math.max(0, localTokens - sel.tailTokens)
  const window: InspectReport['window'] = { context: options.model.limit.context, usable: usage.usable }
  if (options.model.limit.output !== undefined) window.output = options.model.limit.output
  const cut: InspectReport['cut'] = {
    overflow: session.isOverflow(),
    headEnd: sel.headEnd,
    headMessages: sel.headEnd,
    headTokens,
    tailMessages: context.length - sel.headEnd,
    tailTokens: sel.tailTokens,
  }
  if (sel.tailStartID !== undefined) cut.tailStartID = sel.tailStartID
  const report: InspectReport = {
    file,
    format: input.format,
    messages: { total: input.messages.length, context: context.length },
    turns: { total: turns(input.messages).length, context: session.turns().length },
    toolCalls: countToolCalls(input.messages),
    compactions: input.messages.filter((m) => m.summary === true).length,
    options,
    window,
    sent: {
      tokens: localTokens + (overhead?.tokens ?? 0),
      messages: localTokens,
      system: overhead?.system ?? 0,
      tools: overhead?.tools ?? 0,
      source: overhead?.source ?? {},
    },
    usage,
    breakdown,
    localTokens,
    largestToolOutputs: session.largestToolOutputs(flags.top ?? 10),
    prune: {
      tokensFreed: pruned.tokensFreed,
      parts: pruned.prunedPartIDs.length,
      messages: new Set(pruned.messageIDs).size,
      tokensAfter: pruned.tokensAfter,
    },
    cost: {
      priced: options.cache?.prices ? 'options' : options.model.cost ? 'model' : 'relative',
      warm: decision.warm,
      nextRequest: decision.nextRequest,
      prune: { saving: decision.saving, cost: decision.cost, pays: decision.prune },
      compaction: decision.compaction,
      compactAt: {
        tokens: decision.threshold,
        due: session.isOverflow() || usage.tokens >= decision.threshold,
        waits: decision.deferCompaction,
      },
    },
    cut,
    warnings: input.warnings,
  }
  if (input.stats) report.stats = input.stats
  return { report, context, session }
}

/** What a prune does to the requests that follow (near the threshold it makes them cost more: the compaction it postpones). */
function pruneSaving(saving: number, usd: (x: number) => string): string {
  return saving >= 0 ? `saves ${usd(saving)} over the requests to follow` : `makes the requests to follow cost ${usd(-saving)} more`
}

/** Whether the default policy compacts now, waits a step, or how far off it is. */
function compactNow(at: InspectReport['cost']['compactAt'], tokens: number): string {
  if (!at.due) return `${int(at.tokens - tokens)} tokens away`
  return at.waits ? 'due, waits one step for the model to read the newest output' : 'due now'
}

const ORIGIN = { option: '--system / --tools', transcript: 'the transcript' } as const

/** `sent to the model  47,012 tokens: messages 45,458 + system prompt 1,554 (the transcript) + tools 0`. */
export function sentLine(sent: InspectReport['sent'], c: RunContext['colors']): string {
  const from = (k: 'system' | 'tools') => (sent.source[k] ? c.dim(` (${ORIGIN[sent.source[k]]})`) : '')
  const unknown = !sent.source.system && !sent.source.tools ? c.dim('  · not in the transcript (--system / --tools count them)') : ''
  return (
    `sent to the model  ${int(sent.tokens)} tokens: messages ${int(sent.messages)} + system prompt ${int(sent.system)}${from('system')}` +
    ` + tools ${int(sent.tools)}${from('tools')}${unknown}`
  )
}

const SOURCE: Record<ContextUsage['source'], string> = {
  usage: 'provider-reported usage',
  estimate: 'local count',
  mixed: 'provider usage + local count',
}

export function renderInspect(r: InspectReport, context: readonly Message[], ctx: RunContext, width: number): string[] {
  const c = ctx.colors
  const out: string[] = []
  const w = r.window.context
  const head = (s: string) => c.bold(s)
  const tierColor = (tier: ContextUsage['tier']) => (tier === 'compact' ? c.red : tier === 'prune' ? c.yellow : tier === 'notice' ? c.yellow : c.green)

  out.push(head(r.file))
  const stats = r.stats
  const formatNote = stats
    ? c.dim(` (${plural(stats.records, 'record')}; ${int(stats.merged)} merged, ${int(stats.skipped)} skipped, ${int(stats.offBranch)} off-branch)`)
    : ''
  const tc = r.toolCalls
  const toolNote = [tc.error ? `${int(tc.error)} failed` : '', tc.pending ? `${int(tc.pending)} unanswered` : '', tc.pruned ? `${int(tc.pruned)} pruned` : '']
    .filter(Boolean)
    .join(', ')
  out.push(
    ...table([
      ['format', `${r.format}${formatNote}`],
      ['messages', `${int(r.messages.total)}${r.messages.context !== r.messages.total ? `, ${int(r.messages.context)} in context` : ''}`],
      ['turns', `${int(r.turns.total)}${r.turns.context !== r.turns.total ? `, ${int(r.turns.context)} in context` : ''}`],
      ['tool calls', `${int(tc.total)}${toolNote ? ` (${toolNote})` : ''}`],
      ...(r.compactions ? [['compactions', int(r.compactions)]] : []),
      ['tokenizer', r.options.tokenizer ?? 'default'],
    ]),
  )

  // The window.
  out.push('')
  const u = r.usage
  const tier = tierColor(u.tier)
  out.push(
    `${head('Context')}  ${int(u.tokens)} / ${int(w)} tokens (${pct(u.tokens, w)})  ${c.dim('·')}  usable ${int(u.usable)}  ${c.dim('·')}  ` +
      `pressure ${tier(`${u.pressure.toFixed(2)} ${u.tier}`)}  ${c.dim(`· ${SOURCE[u.source]}`)}`,
  )
  out.push(`  ${sentLine(r.sent, c)}`)
  const segs = segments(r.breakdown, u, w, width, r.sent)
  out.push(`  ${renderBar(segs, c)}`)
  out.push(...renderLegend(segs, w, c))

  // Largest tool outputs.
  out.push('')
  if (r.largestToolOutputs.length === 0) out.push(`${head('Largest tool outputs')}  ${c.dim('none in the context')}`)
  else {
    out.push(head('Largest tool outputs'))
    out.push(
      ...table(
        [
          [c.dim('tokens'), c.dim('tool'), c.dim('file'), c.dim('message')],
          ...r.largestToolOutputs.map((t) => [int(t.tokens), t.tool + (t.pruned ? c.dim(' (pruned)') : ''), t.path ?? c.dim('–'), c.dim(t.messageID)]),
        ],
        new Set([0]),
      ),
    )
  }

  // Prune.
  out.push('')
  const p = r.prune
  const cfg = r.options.compaction ?? {}
  if (p.parts > 0) {
    out.push(
      `${head('Prune')}  would free ${c.bold(int(p.tokensFreed))} tokens from ${plural(p.parts, 'tool output')} in ${plural(p.messages, 'message')} ` +
        `(${int(u.tokens)} → ${int(p.tokensAfter)} tokens)`,
    )
  } else {
    out.push(
      `${head('Prune')}  nothing to clear ${c.dim(
        `(keeps the last 2 turns and the newest ${int(cfg.pruneProtect ?? 0)} tokens of tool output; clears only more than ${int(cfg.pruneMinimum ?? 0)})`,
      )}`,
    )
  }

  // The bill.
  const cost = r.cost
  const usd = (x: number) => `$${x < 0.01 ? x.toFixed(4) : x.toFixed(2)}`
  const priced = cost.priced === 'relative' ? c.dim(' (no prices known: relative, input at $1 per million tokens; --prices sets them)') : ''
  out.push('')
  out.push(`${head('Cost')}${priced}`)
  const pays = cost.prune.pays ? c.green('the default policy would prune') : c.dim('the default policy would not prune')
  out.push(
    ...table([
      ['next request', `${usd(cost.nextRequest)} ${c.dim(cost.warm ? '(cache warm: what the last request sent is read back)' : '(cache cold: all written again)')}`],
      ...(p.parts > 0 ? [['prune now', `${pruneSaving(cost.prune.saving, usd)}, costs ${usd(cost.prune.cost)} of cache re-writes: ${pays}`]] : []),
      ['a compaction', usd(cost.compaction)],
      ['next compaction', `at ${int(cost.compactAt.tokens)} tokens ${c.dim("(the default's cheapest threshold)")}: ${compactNow(cost.compactAt, u.tokens)}`],
    ]),
  )

  // The cut.
  out.push('')
  const cut = r.cut
  out.push(`${head('Compaction')} at a ${int(w)}-token window`)
  const overflow = cut.overflow ? c.red(`yes: ${int(u.tokens)} ≥ ${int(u.usable)} usable`) : c.green(`no: ${int(u.tokens)} < ${int(u.usable)} usable`)
  const tailMsg = context[cut.headEnd]
  const tailFrom = tailMsg ? ` from ${tailMsg.id} ${c.dim(`(${tailMsg.role}: ${preview(tailMsg)})`)}` : ''
  out.push(
    ...table([
      ['overflows', overflow],
      ['summarized', cut.headMessages > 0 ? `${plural(cut.headMessages, 'message')}, ${int(cut.headTokens)} tokens` : c.dim('nothing to summarize')],
      ['kept verbatim', `${plural(cut.tailMessages, 'message')}, ${int(cut.tailTokens)} tokens${tailFrom}`],
    ]),
  )

  // Warnings.
  if (r.warnings.length > 0) {
    out.push('')
    out.push(head(`Warnings (${int(r.warnings.length)})`))
    const shown = r.warnings.slice(0, 20)
    for (const wn of shown) out.push(`  ${c.yellow(wn.line > 0 ? `line ${wn.line}` : 'input')}: ${wn.message}`)
    if (r.warnings.length > shown.length) out.push(c.dim(`  … and ${int(r.warnings.length - shown.length)} more (--json lists them all)`))
  }
  return out
}

export function registerInspect(program: Command, run: (action: (ctx: RunContext) => Promise<void>, flags: CommonFlags) => Promise<void>): void {
  const cmd = program
    .command('inspect')
    .description('show what a session holds: tokens by kind against the window, largest tool outputs, what prune would free, where compaction would cut, import warnings')
    .argument('<file>', 'a transcript (Claude Code, Codex, pi, opencode, ...), contextfold messages (JSONL), a session store, or a postgres:// or redis:// URL with --session; - reads stdin')
    .option('--top <n>', 'how many of the largest tool outputs to list (default: 10)', countArg)
  addPriceOptions(addOverheadOptions(addCommonOptions(cmd))).action(async (file: string, flags: InspectFlags) => {
    await run(async (ctx) => {
      const { report, context } = await inspectReport(file, flags, ctx)
      ctx.progress.stop()
      if (ctx.json) printJson(report)
      else {
        const columns = process.stdout.isTTY ? process.stdout.columns || 80 : 80
        const width = Math.max(20, Math.min(60, columns - 4))
        for (const line of renderInspect(report, context, ctx, width)) print(line)
      }
    }, flags)
  })
}
