// The context now, as Claude Code's /context draws it: a grid of 200 cells over the window, one
// colour per kind (the cells `inspect`'s bar gets, by the same function), exact figures beside it.
import type { InspectReport } from '../../inspect.js'
import { KINDS, segments } from '../../segments.js'
import { card, h, int, pct } from './dom.js'

const COLUMNS = 20
const CELLS = COLUMNS * 10

const SOURCE = { usage: 'provider-reported usage', estimate: 'local count', mixed: 'provider usage + local count' } as const
const ORIGIN = { option: '--system / --tools', transcript: 'from the transcript' } as const

export function contextSection(r: InspectReport): HTMLElement {
  const w = r.window.context
  const u = r.usage
  const segs = segments(r.breakdown, u, w, CELLS, r.sent)
  const grid = h('div', { class: 'grid', role: 'img', 'aria-label': `Context window: ${int(u.tokens)} of ${int(w)} tokens used` })
  for (const seg of segs) {
    for (let i = 0; i < seg.cells; i++) grid.append(h('div', { class: `cell k-${seg.key}`, title: `${seg.label}: ${int(seg.tokens)} tokens` }))
  }
  const rows = segs.filter((seg) => seg.tokens > 0 || seg.key === 'free' || seg.key === 'system' || seg.key === 'tools')
  const legend = h(
    'table',
    { class: 'legend' },
    h('thead', {}, h('tr', {}, h('th', {}), h('th', {}, 'Kind'), h('th', { class: 'num' }, 'Tokens'), h('th', { class: 'num' }, 'Window'), h('th', {}, ''))),
    h(
      'tbody',
      {},
      ...rows.map((seg) =>
        h(
          'tr',
          {},
          h('td', {}, h('span', { class: `swatch k-${seg.key}` })),
          h('td', {}, seg.label),
          h('td', { class: 'num' }, int(seg.tokens)),
          h('td', { class: 'num' }, pct(seg.tokens, w)),
          h('td', { class: 'note' }, KINDS[seg.key].note ?? ''),
        ),
      ),
      h('tr', { class: 'total' }, h('td', {}), h('td', {}, 'Window'), h('td', { class: 'num' }, int(w)), h('td', { class: 'num' }, '100.0%'), h('td', { class: 'note' }, `usable ${int(u.usable)}`)),
    ),
  )
  const sent = r.sent
  const from = (k: 'system' | 'tools') => (sent.source[k] ? ` (${ORIGIN[sent.source[k]]})` : '')
  const known = sent.source.system || sent.source.tools
  return card(
    'context',
    'The context now',
    'What the model reads with the next request, by kind, against the window.',
    h(
      'div',
      { class: 'context-layout' },
      h('div', {}, grid),
      h(
        'div',
        {},
        h('div', { class: 'headline' }, `${int(u.tokens)} tokens`, h('small', {}, `of ${int(w)} (${pct(u.tokens, w)})`)),
        h(
          'div',
          { class: 'subline' },
          'pressure ',
          h('span', { class: `pill tier-${u.tier}` }, `${u.pressure.toFixed(2)} ${u.tier}`),
          ` · usable ${int(u.usable)} · ${SOURCE[u.source]}`,
        ),
        h(
          'p',
          { class: 'subline' },
          `Sent to the model: ${int(sent.tokens)} tokens — messages ${int(sent.messages)} + system prompt ${int(sent.system)}${from('system')} + tools ${int(sent.tools)}${from('tools')}`,
          known ? '' : '. The transcript does not record the system prompt or the tools; --system / --tools count them.',
        ),
        legend,
      ),
    ),
  )
}
