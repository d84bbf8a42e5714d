// The page's script: reads the data the command line put in the page and draws each section.
// Nothing is fetched: the page works from a file, offline.
import type { ViewData } from '../data.js'
import { compactionsSection } from './compactions.js'
import { h, int, plural } from './dom.js'
import { figuresSection, toolOutputsSection } from './figures.js'
import { contextSection } from './grid.js'
import { messagesSection } from './messages.js'
import { timelineSection } from './timeline.js'

declare global {
  interface Window {
    /** Set once the page is drawn (for the benchmark and the browser tests). */
    contextfoldReady?: boolean
  }
}

function start(): void {
  const d = JSON.parse(document.getElementById('cf-data')!.textContent!) as ViewData
  const r = d.report
  const name = r.file.split(/[\\/]/).pop() || r.file
  document.title = `${name} · contextfold view`
  const byId = new Map(d.messages.map((m, i) => [m.id, i]))
  const messages = messagesSection(d)
  const compactions = compactionsSection(d, (i) => messages.show(i))
  const sections: Array<[string, string]> = [
    ['context', 'Context'],
    ['timeline', 'Timeline'],
    ['compactions', `Compactions (${int(d.compactions.length)})`],
    ['messages', 'Messages'],
    ['tools', 'Tool outputs'],
    ['figures', 'Figures'],
  ]
  const model = r.options.model
  document.getElementById('app')!.replaceChildren(
    h(
      'header',
      { class: 'top' },
      h('h1', {}, h('span', { class: 'brand' }, 'contextfold view'), r.file),
      h(
        'div',
        { class: 'meta' },
        h('span', {}, `format ${r.format}`),
        h('span', {}, plural(r.messages.total, 'message')),
        h('span', {}, plural(r.compactions, 'compaction')),
        model.modelID ? h('span', {}, [model.providerID, model.modelID].filter(Boolean).join('/')) : null,
        h('span', {}, `window ${int(r.window.context)}`),
        h('span', {}, `tokenizer ${r.options.tokenizer ?? 'default'}`),
      ),
    ),
    h('nav', { class: 'sections', 'aria-label': 'Sections' }, h('ul', {}, ...sections.map(([id, label]) => h('li', {}, h('a', { href: `#${id}` }, label))))),
    h(
      'main',
      {},
      contextSection(r),
      timelineSection(d, (n) => {
        compactions.open(n)
      }),
      compactions.el,
      messages.el,
      toolOutputsSection(r, (id) => {
        const i = byId.get(id)
        if (i !== undefined) messages.show(i)
      }),
      figuresSection(r),
    ),
    h('footer', {}, `contextfold ${d.version} · a self-contained page: it loads nothing and sends nothing.`),
  )
  window.contextfoldReady = true
}

start()
