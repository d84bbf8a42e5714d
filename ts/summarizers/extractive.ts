// The offline summarizer: fills a template's sections from the plan's facts, file lists and previous
// summary. Deterministic, no network: the CLI's default and `compact()`'s fallback.
import type { CompactionPlan, Fact, TokenizerName } from '../native.js'
import { InvalidArgumentError, throwIfAborted } from '../errors.js'
import { countTokens, escapeText, estimateTokens } from '../native.js'
import { unframeSummary } from '../prompt.js'
import { getTemplate, type DigestKey, type Template } from '../templates.js'
import type { Summarizer, TemplateName } from '../types.js'

/** Items kept per section: the first few and the newest. */
const MAX_ITEMS = 40
const KEEP_FIRST = 10
const NOTE =
  '(Summary extracted without a model: requests, constraints, commands, errors, identifiers and files are quoted verbatim; reasoning was not recorded.)'

function clip(text: string, max: number): string {
  const t = text.trim()
  if (t.length <= max) return t
  const head = Math.ceil(max * 0.6)
  return `${t.slice(0, head)} […] ${t.slice(t.length - (max - head))}`
}

type Digest = Partial<Record<DigestKey, string[]>>

const code = (s: string) => (s.includes('`') ? s : `\`${s}\``)

/** What the plan's facts (collected natively) say, section by section. */
function digest(plan: CompactionPlan, hasPrevious: boolean): Digest {
  const f = plan.facts
  const users = f.userMessages.map((u) => u.trim()).filter(Boolean)
  const first = users[0]
  const kept = (kind: string) => plan.keep.filter((k) => k.kind === kind)
  const request = kept('request')[0]?.text ?? f.latestRequest
  // The newest request is current; when it is kept verbatim after the summary, older ones are not presented as current.
  const latest =
    request === undefined ? [] : f.latestRequestKept ? ['Latest request: in the messages after this summary.'] : [`Latest request: ${request}`]
  const lastError = kept('error')[0]
  const errorLine = lastError
    ? [`Last error (${lastError.resolved ? 'resolved' : 'unresolved'}): ${lastError.text}${f.lastError?.text === lastError.text ? ` (${f.lastError.source})` : ''}`]
    : []
  const errors = f.errors.filter((e) => !lastError || !e.endsWith(lastError.text)).map((e) => `Error: ${e}`)
  const ids = kept('identifier').map((i) => i.text)
  const identifiers = ids.length ? [`Identifiers: ${ids.join(', ')}`] : []
  const pins = kept('pin').map((p) => `Pinned${p.note ? ` (${p.note})` : ''}: ${p.text}`)
  const open = f.openToolCalls.map((c) => `Unfinished tool call: ${clip(c, 500)}`)
  const lastAssistant = f.lastAssistantText?.trim() ? [`Last assistant message: ${clip(f.lastAssistantText, 1000)}`] : []
  const ran = f.commandGroups.map((g) =>
    g.count === 1 ? `Ran: ${code(clip(g.last, 300))}` : `Ran ${code(g.program)} ${g.count} times (last: ${code(clip(g.last, 300))})`,
  )
  // The lists themselves follow the summary (<read-files>, <modified-files>): say so, do not repeat them.
  const count = (n: number) => `${n} ${n === 1 ? 'file' : 'files'}`
  const files = [
    ...(plan.modifiedFiles.length ? [`${count(plan.modifiedFiles.length)} modified: listed under modified-files after this summary.`] : []),
    ...(plan.readFiles.length ? [`${count(plan.readFiles.length)} only read: listed under read-files after this summary.`] : []),
  ]
  const nextRequest = request !== undefined && !f.latestRequestKept ? [`Continue with the latest request: ${clip(request, 300)}`] : []
  return {
    goal: [...(!hasPrevious && first !== undefined && first !== request ? [`Original request: ${first}`] : []), ...latest],
    constraints: kept('constraint').map((c) => c.text),
    done: ran,
    inProgress: [...open],
    decisions: kept('decision').map((d) => d.text),
    blocked: lastError && !lastError.resolved ? errorLine : [],
    next: [...nextRequest, ...(open.length ? ['Check the unfinished tool calls (see above): they never returned a result.'] : [])],
    critical: [...pins, ...errorLine, ...errors, ...identifiers, ...lastAssistant, NOTE],
    files,
    concepts: [...identifiers],
    errors: [...errorLine, ...errors],
    userMessages: users.map((u) => clip(u, 600)),
    pending: [...latest, ...open],
    current: [...pins, ...lastAssistant, ...open],
    resolved: [...(lastError?.resolved ? errorLine : [])],
  }
}

const normalize = (heading: string) =>
  heading
    .replace(/^#+\s*/, '')
    .replace(/^\d+[.)]\s*/, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .toLowerCase()

const NONE = /^\(?none( recorded)?\)?\.?$/i

/** Sections of a Markdown summary: normalized heading → items (bullet text, continuation lines joined). */
export function parseSections(markdown: string): Map<string, string[]> {
  const out = new Map<string, string[]>()
  let items: string[] | undefined
  for (const line of markdown.split('\n')) {
    const heading = /^#{1,6}\s+\S/.test(line)
    if (heading) {
      items = []
      out.set(normalize(line), items)
      continue
    }
    if (!items || !line.trim()) continue
    const bullet = /^\s{0,1}(?:[-*+]|\d+[.)])\s+(.*)$/.exec(line)
    if (bullet) items.push(bullet[1] ?? '')
    else if (/^\s+/.test(line) && items.length) items[items.length - 1] += `\n${line.replace(/^\s{1,3}/, '')}`
    else items.push(line.trim())
  }
  for (const [k, v] of out) out.set(k, v.filter((i) => !NONE.test(i.trim())))
  return out
}

/** Labels whose older items the newer ones replace instead of adding to, in every section. */
const REFRESHED = [
  'Latest request:',
  'Last assistant message:',
  'Continue with the latest request:',
  'Unfinished tool call:',
  'Last error (',
  'Identifiers:',
]
const REFRESHED_PATTERNS = [/^\d+ files? modified: /, /^\d+ files? only read: /]
/** A newer latest request also makes the older one's next step stale (when the newer is kept verbatim, none is written). */
const ALSO_REFRESHED: Record<string, string[]> = { 'Latest request:': ['Continue with the latest request:'] }

/** Whether a previous item is replaced by what `fresh` (every section's new items) holds. */
function refresher(fresh: string[]): (item: string) => boolean {
  const labels = REFRESHED.filter((l) => fresh.some((f) => f.startsWith(l))).flatMap((l) => [l, ...(ALSO_REFRESHED[l] ?? [])])
  const patterns = REFRESHED_PATTERNS.filter((re) => fresh.some((f) => re.test(f)))
  return (item) => labels.some((l) => item.startsWith(l)) || patterns.some((re) => re.test(item))
}

function merge(previous: string[], fresh: string[], refreshed: (item: string) => boolean): string[] {
  const kept = previous.filter((p) => !refreshed(p))
  const seen = new Set<string>()
  const out: string[] = []
  for (const item of [...kept, ...fresh]) {
    const key = item.trim()
    if (!key || seen.has(key)) continue
    seen.add(key)
    out.push(item)
  }
  if (out.length <= MAX_ITEMS) return out
  const dropped = out.length - (MAX_ITEMS - 1)
  return [...out.slice(0, KEEP_FIRST), `(${dropped} more omitted)`, ...out.slice(KEEP_FIRST + dropped)]
}

function render(t: Template, items: Map<string, string[]>): string {
  const lines: string[] = []
  for (const s of t.sections) {
    if (lines.length && !lines[lines.length - 1]?.startsWith('## ')) lines.push('')
    lines.push(s.heading)
    if (!s.key) continue
    const list = items.get(s.heading) ?? []
    if (!list.length) {
      lines.push(s.numbered ? '1. (none)' : '- (none)')
      continue
    }
    list.forEach((item, i) => {
      const marker = s.numbered ? `${i + 1}. ` : '- '
      lines.push(marker + escapeText(item).split('\n').join(`\n${' '.repeat(marker.length)}`))
    })
  }
  return lines.join('\n')
}

export interface ExtractiveOptions {
  template?: TemplateName
  /** Tokens the summary may take (default `plan.summaryBudget`). */
  budget?: number
  /** How they are counted: the session's tokenizer (default `estimate`). */
  tokenizer?: TokenizerName
}

/** A token counter for `tokenizer`. */
function counter(tokenizer: TokenizerName | undefined): (text: string) => number {
  return tokenizer === 'o200k' || tokenizer === 'cl100k' ? (text) => countTokens(text, tokenizer) : estimateTokens
}

/** Notes this summarizer adds about itself: dropped when a previous summary is read, so updates do not pile them up. */
const OWN_NOTES = /^\((\d+ less referenced items left out to fit the summary budget|\d+ more omitted)\.?\)$/

/**
 * The extractive summary of `plan`, in `template`'s sections. With a previous summary it updates it
 * in place: each section keeps the previous items and adds the new ones (a previous summary in
 * other sections is kept whole under the last section).
 */
export function extractiveSummary(plan: CompactionPlan, options: ExtractiveOptions = {}): string {
  const t = getTemplate(options.template)
  const previous = plan.previousSummary?.trim() ? unframeSummary(plan.previousSummary) : undefined
  const d = digest(plan, previous !== undefined)
  const prevSections = previous ? parseSections(previous) : new Map<string, string[]>()
  for (const [k, v] of prevSections) prevSections.set(k, v.filter((i) => !OWN_NOTES.test(i.trim())))
  const matched = t.sections.some((s) => s.key && prevSections.has(normalize(s.heading)))
  const items = new Map<string, string[]>()
  const refreshed = refresher(t.sections.flatMap((s) => (s.key ? (d[s.key] ?? []) : [])))
  for (const s of t.sections) {
    if (!s.key) continue
    items.set(s.heading, merge(prevSections.get(normalize(s.heading)) ?? [], d[s.key] ?? [], refreshed))
  }
  if (previous && !matched) {
    const last = [...t.sections].reverse().find((s) => s.key === 'critical') ?? t.sections[t.sections.length - 1]
    if (last) items.set(last.heading, [...(items.get(last.heading) ?? []), `Earlier summary:\n${previous}`])
  }
  return fit(t, items, plan, options.budget ?? plan.summaryBudget, counter(options.tokenizer))
}

/** Words that name things (paths, identifiers, commands): four characters or more. */
const NAMES = /[A-Za-z0-9_][\w./-]{3,}/g

/**
 * How often the transcript mentions an item: the count of its most mentioned name. Built once, on
 * the first drop, from one pass over the transcript.
 */
function referenceCounter(plan: CompactionPlan): (item: string) => number {
  let counts: Map<string, number> | undefined
  return (item) => {
    if (!counts) {
      counts = new Map()
      for (const block of plan.transcript) for (const [w] of block.matchAll(NAMES)) counts.set(w, (counts.get(w) ?? 0) + 1)
    }
    let best = 0
    for (const [w] of item.matchAll(NAMES)) best = Math.max(best, counts.get(w) ?? 0)
    return best
  }
}

/** The order of importance of the facts (the loss audit's): a less important one is left out first. */
const IMPORTANCE: Record<string, number> = { identifier: 1, decision: 2, error: 3, constraint: 4, pin: 5, request: 6 }

const droppedNote = (n: number) => `\n\n(${n} less referenced items left out to fit the summary budget.)`

/**
 * The rendered summary within `budget` tokens (as `count` counts them, the closing note included).
 * While it is over, the section with the most droppable items loses its least referenced item (the
 * oldest among equals), so the most recent and most referenced stay. Items that quote a fact the
 * summary must keep (`plan.keep`) go only when nothing else is left, least important first (the
 * loss audit restores them verbatim after the summary); a budget smaller than the bare sections
 * cuts the text.
 */
function fit(t: Template, items: Map<string, string[]>, plan: CompactionPlan, budget: number, count: (text: string) => number): string {
  const facts = plan.keep.filter((k) => k.kind !== 'readFile' && k.kind !== 'modifiedFile' && k.text.trim())
  const factOf = (item: string): Fact | undefined => facts.find((f) => item.includes(f.text.trim()))
  const keeps = (item: string) => item === NOTE || factOf(item) !== undefined
  const references = referenceCounter(plan)
  // Items cost about their own tokens: drop by that estimate, and count the whole text once it is under.
  const cost = (item: string) => count(escapeText(item)) + 1
  const measure = (n: number) => count(render(t, items) + (n ? droppedNote(n) : ''))
  let dropped = 0
  let total = measure(0)
  let estimate = total
  while (total > budget) {
    const victim = leastReferenced(items, keeps, references) ?? leastImportant(items, factOf)
    if (!victim) break
    const [list, i] = victim
    estimate -= cost(list[i]!)
    list.splice(i, 1)
    dropped++
    if (estimate <= budget) estimate = total = measure(dropped)
  }
  if (total > budget) total = measure(dropped)
  const text = render(t, items) + (dropped ? droppedNote(dropped) : '')
  return total > budget ? cut(text, budget, count) : text
}

type Victim = [string[], number]

/** The least referenced droppable item of the section with the most of them. */
function leastReferenced(items: Map<string, string[]>, keeps: (item: string) => boolean, references: (item: string) => number): Victim | undefined {
  let best: string[] | undefined
  let bestCount = 0
  for (const list of items.values()) {
    const n = list.filter((i) => !keeps(i)).length
    if (n > bestCount) [best, bestCount] = [list, n]
  }
  if (!best) return undefined
  let victim = -1
  let fewest = Infinity
  best.forEach((item, i) => {
    if (keeps(item)) return
    const n = references(item)
    if (n < fewest) [victim, fewest] = [i, n]
  })
  return [best, victim]
}

/** The item quoting the least important fact (the longest among equals); the extraction note last. */
function leastImportant(items: Map<string, string[]>, factOf: (item: string) => Fact | undefined): Victim | undefined {
  let out: Victim | undefined
  let rank = Infinity
  let size = -1
  for (const list of items.values()) {
    list.forEach((item, i) => {
      const r = item === NOTE ? 100 : (IMPORTANCE[factOf(item)?.kind ?? ''] ?? 0)
      if (r < rank || (r === rank && item.length > size)) [out, rank, size] = [[list, i], r, item.length]
    })
  }
  return out
}

/** The longest beginning of `text` (at a line, else at a character) within `budget` tokens. */
function cut(text: string, budget: number, count: (text: string) => number): string {
  let lo = 0
  let hi = text.length
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (count(text.slice(0, mid)) <= budget) lo = mid
    else hi = mid - 1
  }
  const line = text.lastIndexOf('\n', lo)
  return text.slice(0, line > 0 ? line : lo).trimEnd()
}

const EXTRACTIVE = Symbol.for('contextfold.extractiveSummarizer')

/**
 * The offline summarizer. It works from `req.plan` (which `compact()` always passes) and ignores
 * the prompt; its summary fits `req.maxOutputTokens` as the session's tokenizer (`req.tokenizer`)
 * counts. Without a plan it throws `CF_INVALID_ARGUMENT`.
 */
export function extractiveSummarizer(options: Omit<ExtractiveOptions, 'budget'> = {}): Summarizer {
  const summarizer: Summarizer = async (req, signal) => {
    throwIfAborted(signal)
    if (!req.plan) {
      throw new InvalidArgumentError('the extractive summarizer works from the compaction plan: pass `plan` in the request')
    }
    const template = req.template ?? options.template
    const tokenizer = req.tokenizer ?? options.tokenizer
    const text = extractiveSummary(req.plan, { ...(template ? { template } : {}), ...(tokenizer ? { tokenizer } : {}), budget: req.maxOutputTokens })
    return { text, finishReason: 'stop' }
  }
  Object.defineProperty(summarizer, EXTRACTIVE, { value: true })
  return summarizer
}

/** True for summarizers made by `extractiveSummarizer()`. */
export function isExtractive(s: Summarizer): boolean {
  return (s as unknown as Record<symbol, unknown>)[EXTRACTIVE] === true
}
