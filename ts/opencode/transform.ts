// What `experimental.chat.messages.transform` does to the messages of every model call: contextfold's
// prune rules clear old tool output, and old outputs longer than a limit keep their head and tail.
// Only the output text of a tool part changes, never which parts there are, so a tool call always
// goes out with its result. opencode hands the hook messages read for this one call: what is
// stored stays whole, and turning the plugin off brings every output back.
import { toModelMessages, type CompactionConfig, type Message, type ModelInfo, type ModelMessage, type Overhead, type PruneResult } from '../native.js'
import { CallPruner } from '../call-pruner.js'
import { toMessages, type OpencodeMessage, type OpencodeToolPart } from './messages.js'

/** The prune settings the plugin passes on (contextfold's `CompactionConfig`). */
export type PruneOptions = Pick<
  CompactionConfig,
  'pruneProtect' | 'pruneProtectSteps' | 'pruneMinimum' | 'protectedTools' | 'pruneDuplicates' | 'pruneRereads' | 'pruneStaleReads'
>

/** Besides opencode's age rule: identical outputs, re-reads of the same content and reads of files modified since. */
export const DEFAULT_PRUNE: PruneOptions = { pruneDuplicates: true, pruneRereads: true, pruneStaleReads: true }

/** What `foldToolOutputs` applies: prune settings (or `false`) and the truncation limit in characters (or `false`). */
export interface FoldOptions {
  prune: PruneOptions | false
  toolOutputMaxChars: number | false
  /** The session's pruner: what earlier calls cleared, and when to clear more (default: a fresh one clearing by opencode's rule). */
  pruner?: CallPruner
  /** The model the call goes to (window and prices, for the cache policy). */
  model?: ModelInfo
  /** What the call carries besides the messages (its system prompt), counted toward the window. */
  overhead?: Overhead
}

/** What a transform changed. */
export interface FoldResult {
  /** Outputs cleared or replaced by a stub. */
  pruned: number
  /** Of those, the ones this call cleared for the first time, and the tokens they free. */
  added: number
  tokensFreed: number
  /** Outputs cut to their head and tail. */
  truncated: number
  /** The call was over the window: the outputs the model had not read yet, cut to fit (head and tail kept). */
  cut?: PruneResult
}

type Completed = OpencodeToolPart & { state: Extract<OpencodeToolPart['state'], { status: 'completed' }> }

function completedTools(messages: readonly OpencodeMessage[]): Map<string, Completed> {
  const out = new Map<string, Completed>()
  for (const m of messages) {
    for (const p of m.parts) if (p.type === 'tool' && p.state.status === 'completed') out.set(p.id, p as Completed)
  }
  return out
}

/** Applies prune and truncation to `messages` in place. */
export function foldToolOutputs(messages: OpencodeMessage[], options: FoldOptions): FoldResult {
  const result: FoldResult = { pruned: 0, added: 0, tokensFreed: 0, truncated: 0 }
  const tools = completedTools(messages)
  if (tools.size === 0) return result
  const touched = new Set<string>()
  // Without pruning, the pruner still cuts unread outputs of a call over the window.
  const pruner = options.pruner ?? new CallPruner({ policy: 'opencode' })
  const model = options.model ?? { limit: { context: 0 } }
  const compaction = options.prune === false ? {} : options.prune
  const pruned = pruner.prune(toMessages(messages), { model, compaction, tokenizer: 'estimate' }, { clear: options.prune !== false, ...(options.overhead ? { overhead: options.overhead } : {}) })
  if (pruned.cut) result.cut = pruned.cut
  for (const part of tools.values()) {
    const c = pruned.cleared.get(part.callID)
    if (!c || part.state.time.compacted !== undefined) continue
    // A stub (a duplicate, a re-read, a stale read) says where the content is; an old output reads as cleared.
    if (c.stub) part.state.output = c.stub
    else part.state.time = { ...part.state.time, compacted: c.at }
    touched.add(part.id)
  }
  result.pruned = touched.size
  result.added = pruned.added
  result.tokensFreed = pruned.tokensFreed
  if (options.toolOutputMaxChars !== false) result.truncated = truncateOld(messages, tools, touched, options.toolOutputMaxChars)
  return result
}

/**
 * Cuts outputs longer than `max` with contextfold's head-and-tail rule (the converter's
 * `toolOutputMaxChars`), except in the newest assistant message: the model reads a result whole once.
 */
function truncateOld(messages: readonly OpencodeMessage[], tools: Map<string, Completed>, skip: Set<string>, max: number): number {
  const newest = messages.findLast((m) => m.info.role === 'assistant')
  const recent = new Set(newest?.parts.map((p) => p.id))
  const long = [...tools.values()].filter(
    (p) => !skip.has(p.id) && !recent.has(p.id) && p.state.time.compacted === undefined && p.state.output.length > max,
  )
  if (long.length === 0) return 0
  const carrier: Message = {
    id: 'contextfold_truncate',
    role: 'assistant',
    parts: long.map((p) => ({ type: 'tool', id: p.id, callID: p.id, tool: p.tool, state: { status: 'completed', input: {}, output: p.state.output } })),
  }
  const cut = new Map<string, string>()
  for (const m of toModelMessages([carrier], { toolOutputMaxChars: max }) as ModelMessage[]) {
    if (m.role !== 'tool') continue
    for (const r of m.content) if (r.output.type === 'text') cut.set(r.toolCallId, r.output.value)
  }
  let n = 0
  for (const p of long) {
    const text = cut.get(p.id)
    if (text !== undefined && text !== p.state.output) {
      p.state.output = text
      n++
    }
  }
  return n
}
