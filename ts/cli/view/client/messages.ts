// Every message, hidden ones included (marked: a summary replaced them), in a searchable
// virtualized list; the selected one whole beside it.
import type { ViewData, ViewFile, ViewMessage, ViewPart } from '../data.js'
import { card, h, int, plural, when } from './dom.js'
import { VirtualList } from './virtual-list.js'

const ROW = 40

/** A one-line preview: the first text, else the first tool call, else the part types. */
export function preview(m: ViewMessage): string {
  for (const p of m.parts) if ((p.type === 'text' || p.type === 'reasoning') && p.text.trim()) return p.text
  const tool = m.parts.find((p) => p.type === 'tool')
  if (tool && tool.type === 'tool') return `${tool.tool} ${tool.input.replace(/\s+/g, ' ')}`
  if (m.request) return 'compaction request'
  return m.parts.map((p) => (p.type === 'other' ? p.kind : p.type)).join(', ') || 'empty'
}

/** Everything a search looks in, lower-cased once. */
function haystack(m: ViewMessage): string {
  const out = [m.id, m.role]
  for (const p of m.parts) {
    if (p.type === 'text' || p.type === 'reasoning') out.push(p.text)
    else if (p.type === 'tool') out.push(p.tool, p.input, p.output ?? '', p.error ?? '', ...(p.attachments ?? []).map((f) => f.filename ?? f.mime))
    else if (p.type === 'file') out.push(p.mime, p.filename ?? '')
    else if (p.type === 'other') out.push(p.kind, p.json)
  }
  return out.join('\n').toLowerCase()
}

type Filter = 'all' | 'context' | 'hidden' | 'tools' | 'compactions'

function keep(m: ViewMessage, f: Filter): boolean {
  switch (f) {
    case 'all':
      return true
    case 'context':
      return m.context
    case 'hidden':
      return !m.context
    case 'tools':
      return m.parts.some((p) => p.type === 'tool')
    case 'compactions':
      return m.summary === true || m.request === true
  }
}

function badges(m: ViewMessage): HTMLElement[] {
  const out: HTMLElement[] = []
  if (!m.context) out.push(h('span', { class: 'badge hidden' }, m.summarizedBy ? `hidden · C${m.summarizedBy}` : 'hidden'))
  if (m.summary) out.push(h('span', { class: 'badge summary' }, 'summary'))
  if (m.request) out.push(h('span', { class: 'badge request' }, 'compaction'))
  if (m.parts.some((p) => p.type === 'tool' && p.pruned)) out.push(h('span', { class: 'badge pruned' }, 'pruned'))
  if (m.error) out.push(h('span', { class: 'badge error' }, 'error'))
  return out
}

/** `text` with each occurrence of `q` (lower case) marked. */
function marked(text: string, q: string): Array<string | HTMLElement> {
  if (!q) return [text]
  const lower = text.toLowerCase()
  const out: Array<string | HTMLElement> = []
  let at = 0
  for (let i = lower.indexOf(q); i >= 0 && out.length < 400; i = lower.indexOf(q, i + q.length)) {
    out.push(text.slice(at, i), h('mark', {}, text.slice(i, i + q.length)))
    at = i + q.length
  }
  out.push(text.slice(at))
  return out
}

/** An image (a data: URL, which the page may show), else what the file is. */
function fileView(f: ViewFile): HTMLElement {
  if (f.mime.startsWith('image/') && f.url.startsWith('data:')) return h('img', { src: f.url, alt: f.filename ?? f.mime, loading: 'lazy' })
  return h('div', { class: 'mono' }, f.url.startsWith('data:') ? `${int(f.url.length)} characters of data` : f.url)
}

function partView(p: ViewPart, q: string): HTMLElement {
  switch (p.type) {
    case 'text':
    case 'reasoning':
      return h('div', { class: 'part' }, h('div', { class: 'part-label' }, p.type === 'reasoning' ? 'reasoning' : p.synthetic ? 'text (added by the agent)' : 'text'), h('pre', { class: 'block' }, ...marked(p.text, q)))
    case 'tool':
      return h(
        'div',
        { class: 'part' },
        h('div', { class: 'part-label' }, `tool call · ${p.tool} · ${p.status}`, p.pruned ? h('span', { class: 'badge pruned' }, 'output pruned') : null),
        h('pre', { class: 'block' }, ...marked(p.input, q)),
        p.output !== undefined ? h('div', { class: 'part-label' }, `output (${int(p.output.length)} characters)`) : null,
        p.output !== undefined ? h('pre', { class: 'block' }, ...marked(p.output, q)) : null,
        p.error !== undefined ? h('div', { class: 'part-label' }, 'error') : null,
        p.error !== undefined ? h('pre', { class: 'block' }, ...marked(p.error, q)) : null,
        ...(p.attachments ?? []).flatMap((f) => [h('div', { class: 'part-label' }, `attached · ${f.mime}${f.filename ? ` · ${f.filename}` : ''}`), fileView(f)]),
      )
    case 'file':
      return h('div', { class: 'part' }, h('div', { class: 'part-label' }, `file · ${p.mime}${p.filename ? ` · ${p.filename}` : ''}`), fileView(p))
    case 'compaction':
      return h('div', { class: 'part' }, h('div', { class: 'part-label' }, `compaction request · ${p.overflow ? 'automatic, overflow' : p.auto ? 'automatic' : 'manual'}`))
    case 'other':
      return h('div', { class: 'part' }, h('div', { class: 'part-label' }, `${p.kind} (kept as it came)`), h('pre', { class: 'block' }, p.json))
  }
}

export interface MessagesView {
  el: HTMLElement
  show(index: number): void
}

export function messagesSection(d: ViewData): MessagesView {
  let hay: string[] | undefined
  let shown: number[] = d.messages.map((_, i) => i)
  let selected = -1
  let query = ''
  const detail = h('div', { class: 'message-detail', 'aria-live': 'polite' }, h('p', { class: 'faint' }, 'Select a message to read it whole.'))
  const count = h('span', { class: 'count' })
  const list = new VirtualList<number>({
    rowHeight: ROW,
    label: 'Messages',
    empty: 'No message matches.',
    render: (i) => {
      const m = d.messages[i]!
      return h(
        'div',
        { class: `${m.context ? '' : 'hidden-msg'} ${i === selected ? 'selected' : ''}`, onclick: () => select(i), 'data-index': i },
        h('span', { class: 'idx' }, `#${int(i)}`),
        h('span', { class: `role role-${m.role}` }, m.role),
        h('span', { class: 'text' }, ...badges(m), preview(m).replace(/\s+/g, ' ').slice(0, 300)),
        h('span', { class: 'tok num' }, int(m.tokens)),
      )
    },
  })
  const select = (i: number) => {
    selected = i
    const m = d.messages[i]!
    list.redraw()
    const why = !m.context
      ? h('div', { class: 'hidden-note' }, m.summarizedBy ? `Hidden: compaction C${m.summarizedBy} summarized it; the model reads the summary instead.` : 'Hidden: not in the context the model reads.')
      : null
    detail.replaceChildren(
      h(
        'div',
        { class: 'head' },
        h('strong', {}, `#${int(i)} · ${m.role}`),
        h('span', { class: 'mono muted' }, m.id),
        h('span', { class: 'muted' }, `${int(m.tokens)} tokens`),
        m.time ? h('span', { class: 'muted' }, when(m.time)) : null,
        m.model ? h('span', { class: 'muted' }, m.model) : null,
        ...badges(m),
      ),
      why ?? '',
      m.usage ? h('p', { class: 'muted' }, `Provider usage: ${int(m.usage.input)} in${m.usage.cacheRead ? `, ${int(m.usage.cacheRead)} cache read` : ''}${m.usage.cacheWrite ? `, ${int(m.usage.cacheWrite)} cache write` : ''}, ${int(m.usage.output)} out`) : '',
      m.error ? h('p', { class: 'badge error' }, m.error) : '',
      ...m.parts.map((p) => partView(p, query)),
    )
  }
  const search = h('input', { type: 'search', placeholder: 'Search messages: text, tool calls, outputs, ids', 'aria-label': 'Search messages' })
  const filter = h(
    'select',
    { 'aria-label': 'Which messages' },
    h('option', { value: 'all' }, 'All messages'),
    h('option', { value: 'context' }, 'In the context'),
    h('option', { value: 'hidden' }, 'Hidden (summarized)'),
    h('option', { value: 'tools' }, 'With tool calls'),
    h('option', { value: 'compactions' }, 'Compactions'),
  )
  const update = () => {
    query = search.value.trim().toLowerCase()
    const f = filter.value as Filter
    if (query && !hay) hay = d.messages.map(haystack)
    shown = []
    d.messages.forEach((m, i) => {
      if (keep(m, f) && (!query || hay![i]!.includes(query))) shown.push(i)
    })
    count.textContent = `${int(shown.length)} of ${plural(d.messages.length, 'message')}`
    list.set(shown)
  }
  let timer = 0
  search.addEventListener('input', () => {
    window.clearTimeout(timer)
    timer = window.setTimeout(update, 120)
  })
  filter.addEventListener('change', update)
  update()
  const hidden = d.messages.filter((m) => !m.context).length
  const el = card(
    'messages',
    'Messages',
    `${plural(d.messages.length, 'message')}, ${int(hidden)} hidden by compactions (the model reads their summaries instead).`,
    h('div', { class: 'toolbar' }, search, filter, count),
    h('div', { class: 'split' }, list.el, detail),
  )
  return {
    el,
    show(index: number) {
      if (!shown.includes(index)) {
        search.value = ''
        filter.value = 'all'
        update()
      }
      select(index)
      list.reveal(shown.indexOf(index))
      el.scrollIntoView({ block: 'start' })
    },
  }
}
