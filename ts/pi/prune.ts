// Pruning in pi's `context` event: contextfold's prune picks the old tool outputs to clear (by age,
// duplicates, re-reads, stale reads), and those results reach the model as a short marker. pi's
// session keeps the full output; only what calls send changes. A `CallPruner` keeps what it cleared
// cleared in later calls and clears more only when its policy says so. A call over the window has
// the outputs the model has not read yet cut to fit, with or without pruning.
import type { CallPruner } from '../call-pruner.js'
import { PRUNED_MARKER, type Overhead, type PruneResult, type SessionOptions } from '../native.js'
import { importEntries } from './session.js'
import type { PiMessage } from './types.js'

/** Characters per token that overestimates every tokenizer: a cheap bound before the session is built. */
const CHARS_PER_TOKEN_BOUND = 2.5

/** An upper bound of the tokens of `messages`' text (images aside), with `overhead`'s. */
export function tokensBound(messages: readonly PiMessage[], overhead: Overhead = {}): number {
  let chars = [overhead.system ?? []].flat().join('').length + (overhead.tools === undefined ? 0 : JSON.stringify(overhead.tools).length)
  for (const m of messages) {
    const content = m.content
    if (typeof m.output === 'string') chars += m.output.length // a `bashExecution`
    if (typeof content === 'string') chars += content.length
    else if (Array.isArray(content)) {
      for (const c of content as Record<string, unknown>[]) {
        for (const key of ['text', 'thinking'] as const) if (typeof c[key] === 'string') chars += (c[key] as string).length
        if (c.arguments !== undefined) chars += JSON.stringify(c.arguments).length
      }
    }
  }
  return chars / CHARS_PER_TOKEN_BOUND
}

/**
 * The messages of the next model call with old tool output cleared (none with `clear: false`) and
 * unread output cut to fit, or `undefined` (no change) when nothing is; `cut` when this call cut.
 */
export function pruneContext(
  messages: readonly PiMessage[],
  pruner: CallPruner,
  options: SessionOptions,
  call: { clear?: boolean; overhead?: Overhead } = {},
): { messages: PiMessage[]; cut?: PruneResult } | undefined {
  // The messages as a chain of entries, so the pi importer reads them; ids are their indices.
  const entries = messages.map((message, i) => ({ type: 'message', id: `m${i}`, parentId: i ? `m${i - 1}` : null, message }))
  const { cleared, cut } = pruner.prune(importEntries(entries), options, call)
  if (cleared.size === 0) return undefined
  return {
    ...(cut ? { cut } : {}),
    messages: messages.map((m) => {
      if (m.role !== 'toolResult' || typeof m.toolCallId !== 'string' || !cleared.has(m.toolCallId)) return m
      return { ...m, content: [{ type: 'text', text: cleared.get(m.toolCallId)!.stub ?? PRUNED_MARKER }] }
    }),
  }
}
