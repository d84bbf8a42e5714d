// Pruning in pi's `context` event: contextfold's prune picks the old tool outputs to clear (by age,
// duplicates, re-reads, stale reads), and those results reach the model as a short marker. pi's
// session keeps the full output; only what the next call sends changes.
import { prune, type CompactionConfig, type ToolPart } from '../../native.js'
import { importEntries } from './session.js'
import type { PiMessage } from './types.js'

/** What the model reads in place of a cleared output (contextfold's marker). */
const CLEARED = '[Old tool result content cleared]'

/**
 * The messages of the next model call with old tool output cleared, or `undefined` (no change)
 * when the prune rules clear nothing.
 */
export function pruneContext(messages: readonly PiMessage[], cfg: CompactionConfig = {}): { messages: PiMessage[] } | undefined {
  // The messages as a chain of entries, so the pi importer reads them; ids are their indices.
  const entries = messages.map((message, i) => ({ type: 'message', id: `m${i}`, parentId: i ? `m${i - 1}` : null, message }))
  const imported = importEntries(entries)
  const result = prune(imported, { ...cfg, prune: true })
  if (result.prunedPartIDs.length === 0) return undefined
  const parts = new Set(result.prunedPartIDs)
  const calls = new Map<string, string | null>()
  imported.forEach((m) =>
    m.parts.forEach((p) => {
      if (parts.has(p.id) && p.type === 'tool') calls.set((p as ToolPart).callID, result.stubs[result.prunedPartIDs.indexOf(p.id)] ?? null)
    }),
  )
  return {
    messages: messages.map((m) => {
      if (m.role !== 'toolResult' || typeof m.toolCallId !== 'string' || !calls.has(m.toolCallId)) return m
      return { ...m, content: [{ type: 'text', text: calls.get(m.toolCallId) ?? CLEARED }] }
    }),
  }
}
