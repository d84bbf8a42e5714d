// Every compaction, one row each; opened, what it did: tokens before and after, what it
// summarized, kept verbatim and found pruned, the summary, the loss audit, the files, whether it
// fell back to the extractive summary and why, and what the summary call cost.
import type { Fact } from '../../../../native.js'
import type { ViewCompaction, ViewData, ViewMessage } from '../data.js'
import { card, figure, h, int, pct, plural, snippet, usd, when } from './dom.js'
import { VirtualList } from './virtual-list.js'
import { preview } from './messages.js'

const KIND: Record<Fact['kind'], string> = {
  request: 'request',
  pin: 'pin',
  constraint: 'constraint',
  error: 'error',
  decision: 'decision',
  modifiedFile: 'modified file',
  identifier: 'identifier',
  readFile: 'read file',
}

export interface CompactionsView {
  el: HTMLElement
  open(n: number): void
}

export function compactionsSection(d: ViewData, showMessage: (index: number) => void): CompactionsView {
  const detail = h('div', { id: 'compaction-detail' })
  const rows = new Map<number, HTMLElement>()
  const priced = d.compactions.some((c) => c.cost !== undefined)
  const open = (n: number) => {
    const c = d.compactions[n - 1]
    if (!c) return
    for (const [k, row] of rows) row.classList.toggle('open', k === n)
    detail.replaceChildren(compactionDetail(c, d, showMessage))
    detail.scrollIntoView({ block: 'nearest' })
  }
  const body = h('tbody')
  for (const c of d.compactions) {
    const row = h(
      'tr',
      { tabindex: 0, 'aria-label': `Compaction ${c.n}`, onclick: () => open(c.n), onkeydown: (e) => (e as KeyboardEvent).key === 'Enter' && open(c.n) },
      h('td', {}, h('a', { href: '#compaction-detail', onclick: (e) => e.preventDefault() }, `C${c.n}`)),
      h('td', {}, when(c.time) || h('span', { class: 'faint' }, '—')),
      h('td', {}, trigger(c)),
      h('td', { class: 'num' }, `${int(c.tokensBefore)} → ${int(c.tokensAfter)}`),
      h('td', { class: 'num' }, `${int(c.summarized.length)} (${int(c.summarizedTokens)})`),
      h('td', { class: 'num' }, `${int(c.kept.length)} (${int(c.keptTokens)})`),
      h('td', {}, writtenBy(c)),
      priced ? h('td', { class: 'num' }, c.cost !== undefined ? usd(c.cost) : '—') : null,
    )
    rows.set(c.n, row)
    body.append(row)
  }
  const table = h(
    'table',
    { class: 'compactions' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', {}, '#'),
        h('th', {}, 'When'),
        h('th', {}, 'Trigger'),
        h('th', { class: 'num' }, 'Tokens before → after'),
        h('th', { class: 'num' }, 'Summarized (tokens)'),
        h('th', { class: 'num' }, 'Kept verbatim (tokens)'),
        h('th', {}, 'Summary by'),
        priced ? h('th', { class: 'num' }, 'Cost') : null,
      ),
    ),
    body,
  )
  const el =
    d.compactions.length === 0
      ? card('compactions', 'Compactions', 'This session was never compacted.')
      : card('compactions', 'Compactions', `${plural(d.compactions.length, 'compaction')}. Open one to see what it kept, cut and summarized.`, h('div', { class: 'table-scroll' }, table), detail)
  return { el, open }
}

function trigger(c: ViewCompaction): string {
  return c.overflow ? 'automatic, overflow' : c.auto ? 'automatic' : 'manual'
}

/** Who wrote the summary: the model that did, contextfold's extractive fallback, contextfold, or the agent that recorded it. */
function writtenBy(c: ViewCompaction): string {
  if (c.fallback) return 'extractive (fallback)'
  return c.model ?? (c.recorded ? 'contextfold' : 'the source agent')
}

function factList(facts: Array<{ fact: Fact; why?: string }>, empty: string): HTMLElement {
  if (facts.length === 0) return h('p', { class: 'faint' }, empty)
  return h(
    'ul',
    { class: 'facts' },
    ...facts.map(({ fact, why }) => h('li', {}, h('span', { class: 'kind' }, KIND[fact.kind] ?? fact.kind), fact.text, why ? h('span', { class: 'why' }, why) : null)),
  )
}

function messageList(indices: number[], d: ViewData, showMessage: (index: number) => void, label: string): HTMLElement {
  const list = new VirtualList<number>({
    rowHeight: 32,
    className: 'sublist',
    label,
    empty: 'none',
    render: (i) => {
      const m = d.messages[i] as ViewMessage
      return h(
        'div',
        { onclick: () => showMessage(i), title: 'Show in the messages' },
        h('span', { class: 'idx' }, `#${int(i)}`),
        h('span', { class: `role role-${m.role}` }, m.role),
        h('span', { class: 'text' }, snippet(preview(m), 140)),
        h('span', { class: 'tok num' }, int(m.tokens)),
      )
    },
  })
  list.set(indices)
  return list.el
}

function compactionDetail(c: ViewCompaction, d: ViewData, showMessage: (index: number) => void): HTMLElement {
  const saved = c.tokensBefore - c.tokensAfter
  const u = c.usage
  const cost =
    c.cost !== undefined
      ? figure('Summary call cost', usd(c.cost), u ? `${int(u.input)} in${u.cacheRead ? ` + ${int(u.cacheRead)} cached` : ''}, ${int(u.output)} out` : undefined)
      : figure('Summary call cost', '—', u ? 'no prices known (--prices sets them)' : 'no usage recorded')
  const fallback = c.fallback
    ? h('div', { class: 'callout warn' }, h('strong', {}, 'Fell back to the extractive summary. '), c.fallback)
    : c.recorded
      ? h('div', { class: 'callout' }, h('strong', {}, 'No fallback: '), `the summarizer's answer was used${c.model ? ` (${c.model})` : ''}.`)
      : h('div', { class: 'callout' }, 'Made by the source agent: its record holds no loss audit and no fallback reason.')
  const a = c.audit
  const audit = a
    ? h(
        'div',
        { class: 'audit' },
        h('div', {}, h('h4', {}, `Kept (${int(a.kept.length)})`), factList(a.kept.map((fact) => ({ fact })), 'none')),
        h('div', {}, h('h4', {}, `Restored into ## Preserved (${int(a.restored.length)})`), factList(a.restored.map((fact) => ({ fact })), 'none: the summary held every fact')),
        h('div', {}, h('h4', {}, `Dropped (${int(a.dropped.length)})`), factList(a.dropped.map(({ fact, reason }) => ({ fact, why: reason })), 'none')),
      )
    : h('p', { class: 'faint' }, 'No loss audit recorded for this compaction.')
  const files = c.files
    ? h(
        'div',
        { class: 'files' },
        h('div', {}, h('h4', {}, `Read (${int(c.files.read.length)})`), c.files.read.length ? h('ul', {}, ...c.files.read.map((f) => h('li', {}, f))) : h('p', { class: 'faint' }, 'none')),
        h('div', {}, h('h4', {}, `Modified (${int(c.files.modified.length)})`), c.files.modified.length ? h('ul', {}, ...c.files.modified.map((f) => h('li', {}, f))) : h('p', { class: 'faint' }, 'none')),
      )
    : h('p', { class: 'faint' }, 'No file list recorded for this compaction.')
  return h(
    'div',
    { class: 'detail', 'aria-live': 'polite' },
    h('h3', {}, `Compaction C${c.n} · ${trigger(c)}${c.time ? ` · ${when(c.time)}` : ''}`),
    h(
      'div',
      { class: 'figures' },
      figure('Tokens before → after', `${int(c.tokensBefore)} → ${int(c.tokensAfter)}`, saved > 0 ? `${int(saved)} fewer (${pct(saved, c.tokensBefore)})` : 'no smaller'),
      figure('Summarized', plural(c.summarized.length, 'message'), `${int(c.summarizedTokens)} tokens`),
      figure('Kept verbatim', plural(c.kept.length, 'message'), `${int(c.keptTokens)} tokens`),
      figure('Pruned before', plural(c.prunedParts, 'tool output'), `${int(c.prunedTokens)} tokens cleared`),
      cost,
    ),
    fallback,
    h('h3', {}, 'Loss audit'),
    audit,
    h('h3', {}, 'Files'),
    files,
    h('h3', {}, 'Summary'),
    h('pre', { class: 'summary' }, c.text),
    h('div', { class: 'files' }, h('div', {}, h('h4', {}, `Summarized (${int(c.summarized.length)})`), messageList(c.summarized, d, showMessage, 'Summarized messages')), h('div', {}, h('h4', {}, `Kept verbatim (${int(c.kept.length)})`), messageList(c.kept, d, showMessage, 'Messages kept verbatim'))),
  )
}
