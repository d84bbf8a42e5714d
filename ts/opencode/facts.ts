// What the plugin adds to opencode's compaction prompt (`experimental.session.compacting`): the facts
// contextfold collects from the whole session (latest request, user constraints, the last error,
// modified files, identifiers), as its loss audit restores them after a summary that left them out.
import { Session, type CompactionPlan } from '../native.js'
import { toMessages, type OpencodeMessage, type OpencodePart } from './messages.js'

/** The first line of the facts section the plugin adds to opencode's compaction prompt. */
export const FACTS_HEADER = 'Facts contextfold collected from the whole session. Keep each of them, verbatim, in the summary:'

/**
 * opencode's shell tool keeps a command's exit status in `metadata.exit`, not in the output, where
 * contextfold looks for it ("Exit code: 1"): a copy of the part says it there, so a failure counts.
 */
function withExitCode(part: OpencodePart): OpencodePart {
  if (part.type !== 'tool' || part.state.status !== 'completed') return part
  const exit = (part.state.metadata as { exit?: unknown } | undefined)?.exit
  if (typeof exit !== 'number' || exit === 0) return part
  return { ...part, state: { ...part.state, output: `${part.state.output.trimEnd()}\nExit code: ${exit}` } }
}

/** The facts of a session, and the plan they come from (the loss audit of opencode's summary reads it). */
export interface SessionFacts {
  /** The prompt section (undefined when there are none). */
  text?: string
  /** How many facts it lists. */
  count: number
  session: Session
  plan?: CompactionPlan
}

/** The facts of `messages` (the whole session). */
export function sessionFacts(messages: readonly OpencodeMessage[]): SessionFacts {
  const copies = messages.map((m) => ({ ...m, parts: m.parts.map(withExitCode) }))
  // The window does not matter here: nothing is counted against it, everything is summarized.
  const session = Session.fromMessages(toMessages(copies), { model: { limit: { context: 0 } } })
  const last = session.context().at(-1)
  const plan = (last && session.prepareCompaction({ upTo: last.id })) ?? undefined
  if (!plan) return { count: 0, session }
  // With an empty summary and nothing kept, the audit restores every fact its budget allows.
  const section = session.auditCompaction(plan, '').section
  const lines = section?.split('\n') ?? []
  const first = lines.findIndex((l) => l.startsWith('- '))
  if (first < 0) return { count: 0, session, plan }
  const facts = lines.slice(first)
  return { text: [FACTS_HEADER, ...facts].join('\n'), count: facts.filter((l) => l.startsWith('- ')).length, session, plan }
}

/** The facts of `messages` (the whole session) as one prompt section; undefined when there are none. */
export function compactionFacts(messages: readonly OpencodeMessage[]): string | undefined {
  return sessionFacts(messages).text
}
