// The context window as one coloured bar with a legend, like Claude Code's context view: tokens by
// kind (`Session.breakdown()`), what the provider counted beyond the transcript, free space and the
// reserve kept for the answer, each as a share of the window.
import type { Breakdown, ContextUsage } from '../native.js'
import { int, pct, table, type Colors } from './format.js'

type ColorName = Exclude<keyof Colors, 'isColorSupported'>

export type SegmentKey = keyof Breakdown | 'unattributed' | 'free' | 'reserved'

export interface Segment {
  key: SegmentKey
  label: string
  tokens: number
  /** Cells of the bar. */
  cells: number
}

interface Style {
  label: string
  /** The cell's character without colours (so the bar still reads in a log). */
  glyph: string
  color: ColorName
  note?: string
}

export const STYLES: Record<SegmentKey, Style> = {
  system: { label: 'System', glyph: '#', color: 'magentaBright' },
  user: { label: 'User', glyph: 'u', color: 'cyan' },
  assistant: { label: 'Assistant', glyph: 'a', color: 'green' },
  reasoning: { label: 'Reasoning', glyph: 'r', color: 'magenta' },
  toolCalls: { label: 'Tool calls', glyph: 'c', color: 'yellow' },
  toolOutput: { label: 'Tool output', glyph: 'o', color: 'blue' },
  media: { label: 'Media', glyph: 'm', color: 'red' },
  summaries: { label: 'Summaries', glyph: 's', color: 'whiteBright' },
  overhead: { label: 'Overhead', glyph: '+', color: 'gray', note: 'per-message framing' },
  unattributed: {
    label: 'Not in transcript',
    glyph: '?',
    color: 'white',
    note: 'provider-reported beyond the local count: system prompt, tool definitions',
  },
  free: { label: 'Free', glyph: '.', color: 'dim' },
  reserved: { label: 'Reserved', glyph: '_', color: 'yellow', note: 'output and headroom (window − usable)' },
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

/**
 * The segments of the window: the breakdown, the unattributed rest of a provider-reported count,
 * free space up to `usable`, then the reserve up to the window. Over the limit, the bar's scale is
 * what the context holds.
 */
export function segments(b: Breakdown, usage: ContextUsage, window: number, width: number): Segment[] {
  const local = breakdownTotal(b)
  const unattributed = Math.max(0, usage.tokens - local)
  const used = local + unattributed
  const usable = usage.usable > 0 ? usage.usable : window
  const free = Math.max(0, usable - used)
  const reserved = Math.max(0, window - Math.max(usable, used))
  const rows: Array<{ key: SegmentKey; tokens: number }> = [
    ...BREAKDOWN_KEYS.map((key) => ({ key, tokens: b[key] ?? 0 })),
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
  return rows.map((r, i) => ({ key: r.key, label: STYLES[r.key].label, tokens: r.tokens, cells: cells[i]! }))
}

function paint(key: SegmentKey, text: string, c: Colors): string {
  return (c[STYLES[key].color] as (s: string) => string)(text)
}

function cell(key: SegmentKey, c: Colors): string {
  if (!c.isColorSupported) return STYLES[key].glyph
  if (key === 'free') return '·'
  if (key === 'reserved') return '░'
  return '█'
}

/** The bar: `width` cells. */
export function renderBar(segs: Segment[], c: Colors): string {
  return segs.map((s) => (s.cells > 0 ? paint(s.key, cell(s.key, c).repeat(s.cells), c) : '')).join('')
}

/** One legend row per segment with tokens (the breakdown's empty kinds are left out), as % of the window. */
export function renderLegend(segs: Segment[], window: number, c: Colors): string[] {
  const rows = segs
    .filter((s) => s.tokens > 0 || s.key === 'free')
    .map((s) => {
      const note = STYLES[s.key].note
      return [paint(s.key, cell(s.key, c), c), s.label, int(s.tokens), pct(s.tokens, window), note ? c.dim(note) : '']
    })
  return table(rows, new Set([2, 3]))
}
