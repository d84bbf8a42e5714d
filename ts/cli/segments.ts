// The context window cut into segments by kind: `Session.breakdown()`, the system prompt and the
// tool definitions, what the provider counted beyond what is known, free space and the reserve
// kept for the answer, each given cells in proportion. `inspect` draws them as a bar, `view` as a
// grid. No dependency but the native types: the page's script uses it too.
import type { Breakdown, ContextUsage } from '../native.js'

export type SegmentKey = keyof Breakdown | 'tools' | 'unattributed' | 'free' | 'reserved'

export interface Segment {
  key: SegmentKey
  label: string
  tokens: number
  /** Cells of the bar (or grid). */
  cells: number
}

/** Each segment's name, and what it holds where the name does not say it. */
export const KINDS: Record<SegmentKey, { label: string; note?: string }> = {
  system: { label: 'System', note: 'system messages and the system prompt' },
  tools: { label: 'Tools', note: 'tool definitions' },
  user: { label: 'User' },
  assistant: { label: 'Assistant' },
  reasoning: { label: 'Reasoning' },
  toolCalls: { label: 'Tool calls' },
  toolOutput: { label: 'Tool output' },
  media: { label: 'Media' },
  summaries: { label: 'Summaries' },
  overhead: { label: 'Overhead', note: 'per-message framing' },
  unattributed: { label: 'Not in transcript', note: 'provider-reported beyond the local count: system prompt, tool definitions' },
  free: { label: 'Free' },
  reserved: { label: 'Reserved', note: 'output and headroom (window − usable)' },
}

export const BREAKDOWN_KEYS: ReadonlyArray<keyof Breakdown> = [
  'system',
  'user',
  'assistant',
  'reasoning',
  'toolCalls',
  'toolOutput',
  'media',
  'summaries',
  'overhead',
]

export function breakdownTotal(b: Breakdown): number {
  return BREAKDOWN_KEYS.reduce((sum, k) => sum + (b[k] ?? 0), 0)
}

/** Splits `width` cells among `values` in proportion (largest remainder), over `scale`. */
function allocate(values: number[], scale: number, width: number): number[] {
  if (!(scale > 0)) return values.map(() => 0)
  const exact = values.map((v) => (v / scale) * width)
  const cells = exact.map(Math.floor)
  let left = Math.min(width, Math.round(values.reduce((a, b) => a + b, 0) / scale * width)) - cells.reduce((a, b) => a + b, 0)
  const order = exact.map((e, i) => ({ i, r: e - Math.floor(e) })).sort((a, b) => b.r - a.r)
  for (const { i } of order) {
    if (left <= 0) break
    if (values[i]! > 0) {
      cells[i]!++
      left--
    }
  }
  return cells
}

/** The system prompt and tool definitions counted besides the messages (`inspect`'s `sent`). */
export interface Prompt {
  system: number
  tools: number
}

/**
 * The segments of the window: the breakdown (the system prompt with the system messages), the
 * tool definitions, the unattributed rest of a provider-reported count, free space up to `usable`,
 * then the reserve up to the window. Over the limit, the bar's scale is what the context holds.
 */
export function segments(b: Breakdown, usage: ContextUsage, window: number, width: number, prompt: Prompt = { system: 0, tools: 0 }): Segment[] {
  const known = breakdownTotal(b) + prompt.system + prompt.tools
  const unattributed = Math.max(0, usage.tokens - known)
  const used = known + unattributed
  const usable = usage.usable > 0 ? usage.usable : window
  const free = Math.max(0, usable - used)
  const reserved = Math.max(0, window - Math.max(usable, used))
  const rows: Array<{ key: SegmentKey; tokens: number }> = [
    ...BREAKDOWN_KEYS.map((key) => ({ key, tokens: (b[key] ?? 0) + (key === 'system' ? prompt.system : 0) })),
    { key: 'tools', tokens: prompt.tools },
    { key: 'unattributed', tokens: unattributed },
    { key: 'free', tokens: free },
    { key: 'reserved', tokens: reserved },
  ]
  const scale = Math.max(window, used)
  const cells = allocate(
    rows.map((r) => r.tokens),
    scale,
    width,
  )
  return rows.map((r, i) => ({ key: r.key, label: KINDS[r.key].label, tokens: r.tokens, cells: cells[i]! }))
}

