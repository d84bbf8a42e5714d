// The session over time, in hand-written SVG: the context's size after every model call (filled
// points: the provider's usage; hollow: local counts), every compaction (a numbered flag) and
// every prune (a triangle), with the window and the compaction threshold as lines.
import type { ViewData } from '../data.js'
import { card, h, int, plural, s, short, when } from './dom.js'

const W = 1160
const H = 320
const M = { top: 28, right: 16, bottom: 34, left: 56 }
/** Above this many calls the points are left out: the line says enough. */
const MAX_DOTS = 600

export function timelineSection(d: ViewData, openCompaction: (n: number) => void): HTMLElement {
  const r = d.report
  const n = Math.max(1, d.messages.length - 1)
  const top = Math.max(r.window.context, ...d.calls.map((c) => c.tokens), ...d.compactions.map((c) => c.tokensBefore), 1) * 1.06
  const x = (i: number) => M.left + (i / n) * (W - M.left - M.right)
  const y = (t: number) => H - M.bottom - (t / top) * (H - M.top - M.bottom)
  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': 'timeline-h timeline-desc' })
  svg.append(s('desc', { id: 'timeline-desc' }, `Context size after each of ${plural(d.calls.length, 'model call')}, ${plural(d.compactions.length, 'compaction')} and ${plural(d.prunes.length, 'prune')}.`))

  // Axes and grid.
  const axis = s('g', { class: 'axis' })
  const step = niceStep(top / 5)
  for (let t = 0; t <= top; t += step) {
    axis.append(s('line', { class: 'grid-line', x1: M.left, x2: W - M.right, y1: y(t), y2: y(t) }))
    axis.append(s('text', { x: M.left - 8, y: y(t) + 4, 'text-anchor': 'end' }, short(t)))
  }
  for (let k = 0; k <= 5; k++) {
    const i = Math.round((n * k) / 5)
    axis.append(s('text', { x: x(i), y: H - M.bottom + 18, 'text-anchor': k === 0 ? 'start' : k === 5 ? 'end' : 'middle' }, `#${int(i)}`))
  }
  axis.append(s('text', { x: W - M.right, y: H - 4, 'text-anchor': 'end' }, 'message'))
  axis.append(s('line', { x1: M.left, x2: W - M.right, y1: H - M.bottom, y2: H - M.bottom }))
  svg.append(axis)

  // The window and the threshold.
  const line = (tokens: number, cls: string, label: string) => {
    svg.append(s('line', { class: cls, x1: M.left, x2: W - M.right, y1: y(tokens), y2: y(tokens) }))
    // At the left, where a session's context is small: the right is where compactions stand.
    svg.append(s('text', { class: 'line-label', x: M.left + 6, y: y(tokens) - 5 }, label))
  }
  line(r.window.context, 'window', `window ${int(r.window.context)}`)
  if (r.window.usable > 0 && r.window.usable < r.window.context) line(r.window.usable, 'threshold', `compaction threshold ${int(r.window.usable)} (usable)`)

  // The context per call, dropping at each compaction from its size before to its size after.
  if (d.calls.length > 0) {
    const series = [...d.calls.map((c) => [c.index, c.tokens] as const), ...d.compactions.flatMap((c) => [[c.request - 0.01, c.tokensBefore] as const, [c.summary, c.tokensAfter] as const])]
    series.sort((a, b) => a[0] - b[0])
    const pts = series.map(([i, t]) => `${x(i).toFixed(1)},${y(t).toFixed(1)}`)
    const first = series[0]!
    const last = series[series.length - 1]!
    svg.append(s('path', { class: 'area', d: `M${x(first[0]).toFixed(1)},${y(0)} L${pts.join(' L')} L${x(last[0]).toFixed(1)},${y(0)} Z` }))
    svg.append(s('polyline', { class: 'series', points: pts.join(' ') }))
    if (d.calls.length <= MAX_DOTS) {
      for (const c of d.calls) svg.append(s('circle', { class: c.source === 'estimate' ? 'dot-local' : 'dot-usage', cx: x(c.index), cy: y(c.tokens), r: 2.6 }))
    }
  }

  // Prunes and compactions.
  for (const p of d.prunes) {
    const px = x(Math.max(0, p.index - 0.5))
    svg.append(
      s('path', { class: 'prune', d: `M${px - 5},${M.top - 2} L${px + 5},${M.top - 2} L${px},${M.top + 7} Z` }, s('title', {}, `Prune: ${plural(p.parts, 'tool output')} cleared, ${int(p.tokensFreed)} tokens freed (${int(p.tokensBefore)} → ${int(p.tokensAfter)})`)),
    )
  }
  for (const c of d.compactions) {
    const cx = x(c.request)
    svg.append(s('line', { class: 'compaction', x1: cx, x2: cx, y1: M.top + 10, y2: H - M.bottom }))
    const label = `C${c.n}`
    const flag = s(
      'g',
      { class: 'compaction-flag', tabindex: 0, role: 'button', 'aria-label': `Open compaction ${c.n}`, 'data-compaction': c.n },
      s('rect', { x: cx - 3, y: M.top + 10, width: 8 + label.length * 7, height: 16, rx: 3 }),
      s('text', { class: 'flag-text', x: cx + 1, y: M.top + 22 }, label),
      s('title', {}, `Compaction ${c.n}: ${int(c.tokensBefore)} → ${int(c.tokensAfter)} tokens`),
    )
    const open = () => openCompaction(c.n)
    flag.addEventListener('click', open)
    flag.addEventListener('keydown', (e) => {
      if ((e as KeyboardEvent).key === 'Enter' || (e as KeyboardEvent).key === ' ') {
        e.preventDefault()
        open()
      }
    })
    svg.append(flag)
  }

  // Hover: the nearest call.
  const cursor = s('line', { class: 'cursor', y1: M.top, y2: H - M.bottom, visibility: 'hidden' })
  svg.append(cursor)
  const tip = h('div', { class: 'tooltip', hidden: true, role: 'status' })
  const wrap = h('div', { class: 'chart-wrap' }, svg, tip)
  svg.addEventListener('mousemove', (e) => {
    if (d.calls.length === 0) return
    const box = svg.getBoundingClientRect()
    const vx = ((e.clientX - box.left) / box.width) * W
    const at = ((vx - M.left) / (W - M.left - M.right)) * n
    const c = nearest(d.calls, at)
    const m = d.messages[c.index]
    cursor.setAttribute('x1', String(x(c.index)))
    cursor.setAttribute('x2', String(x(c.index)))
    cursor.setAttribute('visibility', 'visible')
    tip.hidden = false
    tip.replaceChildren(
      h(
        'span',
        {},
        h('strong', {}, `${int(c.tokens)} tokens`),
        h('br'),
        `message #${int(c.index)} · ${c.source === 'usage' ? 'provider usage' : c.source === 'mixed' ? 'provider usage + local count' : 'local count'}`,
        m?.time ? h('br') : null,
        m?.time ? when(m.time) : null,
      ),
    )
    tip.style.left = `${(x(c.index) / W) * box.width}px`
    tip.style.top = `${(y(c.tokens) / H) * box.height}px`
  })
  svg.addEventListener('mouseleave', () => {
    tip.hidden = true
    cursor.setAttribute('visibility', 'hidden')
  })

  const sources = new Set(d.calls.map((c) => c.source))
  const legend = h(
    'div',
    { class: 'chart-legend' },
    h('span', {}, h('i'), 'context after each model call'),
    sources.has('usage') || sources.has('mixed') ? h('span', {}, h('i', { class: 'usage' }), 'provider-reported') : null,
    sources.has('estimate') ? h('span', {}, h('i', { class: 'local' }), 'counted locally') : null,
    h('span', {}, h('i', { class: 'window' }), 'window'),
    h('span', {}, h('i', { class: 'threshold' }), 'compaction threshold'),
    h('span', {}, h('i', { class: 'compaction' }), `compaction (${int(d.compactions.length)})`),
    h('span', {}, h('i', { class: 'prune' }), `prune (${int(d.prunes.length)})`),
  )
  return card(
    'timeline',
    'Timeline',
    `${plural(d.calls.length, 'model call')} over ${plural(d.messages.length, 'message')}: the context's size after each, from the provider's usage where it was recorded and local counts elsewhere.`,
    wrap,
    legend,
  )
}

/** A round step for about `raw` between axis lines: 1, 2, 2.5 or 5 times a power of ten. */
function niceStep(raw: number): number {
  const p = 10 ** Math.floor(Math.log10(Math.max(1, raw)))
  const f = raw / p
  return p * (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10)
}

/** The call whose index is nearest `at` (calls are in index order). */
function nearest<T extends { index: number }>(calls: readonly T[], at: number): T {
  let lo = 0
  let hi = calls.length - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (calls[mid]!.index < at) lo = mid + 1
    else hi = mid
  }
  const prev = calls[Math.max(0, lo - 1)]!
  return Math.abs(prev.index - at) < Math.abs(calls[lo]!.index - at) ? prev : calls[lo]!
}
