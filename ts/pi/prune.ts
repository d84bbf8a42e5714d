// Pruning in pi's `context` event: contextfold's prune picks the old tool outputs to clear (by age,
// duplicates, re-reads, stale reads), and those results reach the model as a short marker. pi's
// session keeps the full output; only what calls send changes. A `CallPruner` keeps what it cleared
// cleared in later calls and clears more only when its policy says so.
import type { CallPruner } from '../call-pruner.js'
import { PRUNED_MARKER, type SessionOptions } from '../native.js'
import { importEntries } from './session.js'
import type { PiMessage } from './types.js'

/**
 * The messages of the next model call with old tool output cleared, or `undefined` (no change)
 * when nothing is cleared.
 */
export function pruneContext(messages: readonly PiMessage[], pruner: CallPruner, options: SessionOptions): { messages: PiMessage[] } | undefined {
  // The messages as a chain of entries, so the pi importer reads them; ids are their indices.
  const entries = messages.map((message, i) => ({ type: 'message', id: `m${i}`, parentId: i ? `m${i - 1}` : null, message }))
  const { cleared } = pruner.prune(importEntries(entries), options)
  if (cleared.size === 0) return undefined
  return {
    messages: messages.map((m) => {
      if (m.role !== 'toolResult' || typeof m.toolCallId !== 'string' || !cleared.has(m.toolCallId)) return m
      return { ...m, content: [{ type: 'text', text: cleared.get(m.toolCallId)!.stub ?? PRUNED_MARKER }] }
    }),
  }
}
