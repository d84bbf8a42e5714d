// The context window as one coloured bar with a legend, like Claude Code's context view (the
// segments of `segments.ts`), each as a share of the window.
import { KINDS, type SegmentKey, type Segment } from './segments.js'
import { int, pct, table, type Colors } from './format.js'

type ColorName = Exclude<keyof Colors, 'isColorSupported'>

interface Style {
  /** The cell's character without colours (so the bar still reads in a log). */
  glyph: string
  color: ColorName
}

const STYLES: Record<SegmentKey, Style> = {
  system: { glyph: '#', color: 'magentaBright' },
  tools: { glyph: 't', color: 'cyanBright' },
  user: { glyph: 'u', color: 'cyan' },
  assistant: { glyph: 'a', color: 'green' },
  reasoning: { glyph: 'r', color: 'magenta' },
  toolCalls: { glyph: 'c', color: 'yellow' },
  toolOutput: { glyph: 'o', color: 'blue' },
  media: { glyph: 'm', color: 'red' },
  summaries: { glyph: 's', color: 'whiteBright' },
  overhead: { glyph: '+', color: 'gray' },
  unattributed: { glyph: '?', color: 'white' },
  free: { glyph: '.', color: 'dim' },
  reserved: { glyph: '_', color: 'yellow' },
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
      const note = KINDS[s.key].note
      return [paint(s.key, cell(s.key, c), c), s.label, int(s.tokens), pct(s.tokens, window), note ? c.dim(note) : '']
    })
  return table(rows, new Set([2, 3]))
}
