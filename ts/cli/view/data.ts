// What `contextfold view` shows, computed on the command line's side: `inspect`'s report (made by
// the same function, so the page's figures are those of `inspect --json`), the session over time
// (`Session.timeline()`), each compaction with what its records hold, and every message. The page
// (client/) only draws it.
import type { Audit, CompactionPart, Message, Part, Timeline, Usage } from '../../native.js'
import type { InspectReport } from '../inspect.js'

/** A file or image: a file part, or what a tool result attached. */
export interface ViewFile {
  mime: string
  filename?: string
  url: string
}

function viewFile(f: { mime?: unknown; filename?: unknown; url?: unknown }): ViewFile {
  const out: ViewFile = { mime: String(f.mime ?? ''), url: String(f.url ?? '') }
  if (typeof f.filename === 'string') out.filename = f.filename
  return out
}

/** A part as the page shows it. */
export type ViewPart =
  | { type: 'text' | 'reasoning'; text: string; synthetic?: boolean }
  | { type: 'tool'; tool: string; status: string; input: string; output?: string; error?: string; pruned: boolean; attachments?: ViewFile[] }
  | ({ type: 'file' } & ViewFile)
  | { type: 'compaction'; auto: boolean; overflow: boolean }
  /** A part type contextfold does not know, as it came. */
  | { type: 'other'; kind: string; json: string }

export interface ViewMessage {
  id: string
  role: Message['role']
  /** Its local token count. */
  tokens: number
  /** In the context the model sees now. */
  context: boolean
  /** Hidden by this compaction (its `n`): the model reads its summary instead. */
  summarizedBy?: number
  summary?: boolean
  /** A compaction request (the user message a summary answers). */
  request?: boolean
  time?: number
  model?: string
  usage?: Usage
  error?: string
  parts: ViewPart[]
}

export interface ViewCompaction {
  /** 1-based, in the order of the session. */
  n: number
  /** Indices of its request and its summary in `messages`. */
  request: number
  summary: number
  time?: number
  auto: boolean
  overflow: boolean
  tokensBefore: number
  tokensAfter: number
  /** Indices of the messages it summarized and of those it kept verbatim. */
  summarized: number[]
  summarizedTokens: number
  kept: number[]
  keptTokens: number
  /** Tool outputs already pruned among what the model saw before it. */
  prunedParts: number
  prunedTokens: number
  /** The summary as recorded. */
  text: string
  /** Written by contextfold's `compact()`: the audit, files and fallback below are recorded (else the source agent's own record). */
  recorded: boolean
  audit?: Omit<Audit, 'section'>
  files?: { read: string[]; modified: string[] }
  /** Why the summarizer's answer was not used (the summary is the extractive one). */
  fallback?: string
  /** USD of the summary call, when prices are known. */
  cost?: number
  model?: string
  usage?: Usage
}

export interface ViewData {
  version: string
  report: InspectReport
  calls: Timeline['calls']
  prunes: Timeline['prunes']
  compactions: ViewCompaction[]
  messages: ViewMessage[]
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? ''
  } catch {
    return String(value)
  }
}

function viewPart(p: Part): ViewPart {
  const part = p as Part & Record<string, unknown>
  switch (p.type) {
    case 'text':
    case 'reasoning': {
      const out: ViewPart = { type: p.type, text: String(part.text ?? '') }
      if (part.synthetic === true) out.synthetic = true
      return out
    }
    case 'tool': {
      const state = (part.state ?? {}) as { status?: string; input?: unknown; output?: unknown; error?: unknown; compactedAt?: number; attachments?: unknown }
      const out: ViewPart = { type: 'tool', tool: String(part.tool ?? ''), status: String(state.status ?? ''), input: json(state.input), pruned: state.compactedAt !== undefined }
      if (typeof state.output === 'string') out.output = state.output
      if (state.error !== undefined) out.error = String(state.error)
      if (Array.isArray(state.attachments) && state.attachments.length > 0) out.attachments = state.attachments.map(viewFile)
      return out
    }
    case 'file':
      return { type: 'file', ...viewFile(part as Record<string, unknown>) }
    case 'compaction':
      return { type: 'compaction', auto: part.auto === true, overflow: part.overflow === true }
    default: {
      const { type, ...rest } = part
      return { type: 'other', kind: String(type), json: json(rest) }
    }
  }
}

function modelName(m: Message): string | undefined {
  return m.model ? [m.model.providerID, m.model.modelID].filter(Boolean).join('/') || undefined : undefined
}

function summaryText(m: Message): string {
  return m.parts
    .filter((p) => p.type === 'text')
    .map((p) => String((p as { text?: unknown }).text ?? ''))
    .join('\n\n')
}

/**
 * The page's data: the report `inspect` makes, the timeline, the compactions (the timeline's
 * figures with what the request and summary record) and the messages.
 */
export function viewData(report: InspectReport, messages: readonly Message[], context: ReadonlySet<string>, timeline: Timeline, version: string): ViewData {
  const compactions: ViewCompaction[] = timeline.compactions.map((c, k) => {
    const request = messages[c.request]!
    const summary = messages[c.summary]!
    const part = request.parts.find((p) => p.type === 'compaction') as CompactionPart | undefined
    const out: ViewCompaction = {
      n: k + 1,
      request: c.request,
      summary: c.summary,
      auto: part?.auto === true,
      overflow: part?.overflow === true,
      tokensBefore: c.tokensBefore,
      tokensAfter: c.tokensAfter,
      // In the order of the session (the view reads the summary pair first).
      summarized: [...c.summarized].sort((a, b) => a - b),
      summarizedTokens: c.summarizedTokens,
      kept: [...c.kept].sort((a, b) => a - b),
      keptTokens: c.keptTokens,
      prunedParts: c.prunedParts,
      prunedTokens: c.prunedTokens,
      text: summaryText(summary),
      recorded: part?.audit !== undefined,
    }
    const time = summary.time?.created ?? request.time?.created
    if (time) out.time = time
    if (part?.audit) out.audit = { kept: part.audit.kept, restored: part.audit.restored, dropped: part.audit.dropped }
    if (part?.files) out.files = { read: part.files.read ?? [], modified: part.files.modified ?? [] }
    if (typeof part?.fallback === 'string') out.fallback = part.fallback
    if (c.cost !== undefined) out.cost = c.cost
    const model = modelName(summary)
    if (model) out.model = model
    if (summary.tokens) out.usage = summary.tokens
    return out
  })
  const summarizedBy = new Map<number, number>()
  for (const c of compactions) for (const i of c.summarized) summarizedBy.set(i, c.n)
  const requests = new Set(compactions.map((c) => c.request))
  const viewMessages = messages.map((m, i): ViewMessage => {
    const out: ViewMessage = { id: m.id, role: m.role, tokens: timeline.tokens[i] ?? 0, context: context.has(m.id), parts: m.parts.map(viewPart) }
    const by = summarizedBy.get(i)
    if (by !== undefined && !out.context) out.summarizedBy = by
    if (m.summary === true) out.summary = true
    if (requests.has(i) || m.parts.some((p) => p.type === 'compaction')) out.request = true
    if (m.time?.created) out.time = m.time.created
    const model = modelName(m)
    if (model) out.model = model
    if (m.tokens) out.usage = m.tokens
    if (m.error) out.error = `${m.error.name}: ${m.error.message}`
    return out
  })
  return { version, report, calls: timeline.calls, prunes: timeline.prunes, compactions, messages: viewMessages }
}
