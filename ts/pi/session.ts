// pi's session entries as a contextfold Session: the native pi importer reads them (tool results join
// their calls, compaction entries become contextfold compactions), and the file lists and facts an
// earlier compaction stored in `details` are put where the engine carries them over from.
import type { CallPruner } from '../call-pruner.js'
import { importTranscript, Session, type CompactionConfig, type CompactionFiles, type Message, type SessionOptions } from '../native.js'
import type { PiEntry, PiModel } from './types.js'

type Json = Record<string, unknown>
const obj = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined)
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [])

/** The entries as the text of a pi session file (a header, then one entry per line). */
export function sessionText(entries: readonly PiEntry[]): string {
  const header = { type: 'session', version: 3, id: 'contextfold', timestamp: new Date(0).toISOString(), cwd: '' }
  return [header, ...entries].map((e) => JSON.stringify(e)).join('\n') + '\n'
}

/** pi's entries as canonical messages, each with its entry's id. */
export function importEntries(entries: readonly PiEntry[]): Message[] {
  const { messages } = importTranscript({ text: sessionText(entries) }, { format: 'pi' })
  for (const m of messages) {
    for (const part of m.parts) {
      if (part.type !== 'compaction') continue
      // The pi importer keeps the entry's `details` on the part, a field the message model does not name.
      const details = obj((part as { details?: unknown }).details)
      const ours = obj(details?.contextfold)
      if (ours) {
        if (obj(ours.files)) part.files = ours.files as CompactionFiles
        if (Array.isArray(ours.keep)) part.keep = ours.keep
        // A protected head stays visible: what is hidden starts after it.
        const head = new Set(strings(ours.head))
        const hidden = head.size ? messages.find((x) => !head.has(x.id)) : undefined
        if (hidden && hidden !== m) part.hiddenFromID = hidden.id
      } else if (details && (Array.isArray(details.readFiles) || Array.isArray(details.modifiedFiles))) {
        // pi's own compaction: its cumulative file lists carry over the same way.
        part.files = { read: strings(details.readFiles), modified: strings(details.modifiedFiles) }
      }
    }
  }
  return messages
}

/** Session options for pi's model and compaction settings (`compaction` overrides them). */
export function sessionOptions(model: PiModel | undefined, settings: { reserveTokens?: number; keepRecentTokens?: number }, compaction?: CompactionConfig): SessionOptions {
  const limit: SessionOptions['model']['limit'] = { context: model?.contextWindow ?? 0 }
  if (model?.maxTokens) limit.output = model.maxTokens
  const cfg: CompactionConfig = {}
  if (settings.reserveTokens !== undefined) cfg.reserved = settings.reserveTokens
  if (settings.keepRecentTokens !== undefined) cfg.preserveRecentTokens = settings.keepRecentTokens
  const out: SessionOptions = { model: { limit }, compaction: { ...cfg, ...compaction } }
  if (model) {
    out.model.providerID = model.provider
    out.model.modelID = model.id
    const cost = model.cost
    // pi-ai's prices are per million tokens, as contextfold's; a model priced at zero (a local or
    // test model) gives no ratios to weigh, and a zero read price means no cache discount.
    if (cost && typeof cost.input === 'number' && cost.input > 0 && typeof cost.output === 'number') {
      out.model.cost = { input: cost.input, output: cost.output }
      if (typeof cost.cacheRead === 'number' && cost.cacheRead > 0) out.model.cost.cacheRead = cost.cacheRead
      if (typeof cost.cacheWrite === 'number' && cost.cacheWrite > 0) out.model.cost.cacheWrite = cost.cacheWrite
    }
  }
  return out
}

/**
 * The branch entries of a protected head: the entries of `ids` (messages of contextfold's context)
 * and the tool results that follow them.
 */
export function headEntries(branch: readonly PiEntry[], ids: readonly string[]): string[] {
  const wanted = new Set(ids)
  const out: string[] = []
  let inHead = false
  for (const e of branch) {
    const role = obj(e.message)?.role
    if (wanted.has(e.id)) inHead = true
    else if (!(inHead && e.type === 'message' && role === 'toolResult')) inHead = false
    if (inHead) out.push(e.id)
  }
  return out
}

/**
 * pi's branch as a Session, its messages as the model calls sent them (what `pruner` cleared or cut
 * marked so), and the results of the last step the model answered without error unread: the
 * compaction keeps them in its tail.
 */
export function branchSession(branch: readonly PiEntry[], options: SessionOptions, pruner: CallPruner | undefined): Session {
  const imported = importEntries(branch)
  const messages = pruner ? pruner.apply(imported) : imported
  const at = messages.findLastIndex((m) => m.role === 'assistant' && !m.summary && !m.error)
  if (at < 0 || !messages[at]!.parts.some((p) => p.type === 'tool' && p.state.status === 'completed')) return Session.fromMessages(messages, options)
  const session = Session.fromMessages(messages.slice(0, at), options)
  session.recordRequest()
  for (const m of messages.slice(at)) session.append(m)
  return session
}

