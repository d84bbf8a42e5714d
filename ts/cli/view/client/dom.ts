// Building the page: elements from data, never from markup (a transcript holds HTML of its own),
// and the number formats `inspect` prints.

type Child = Node | string | number | null | undefined | false
type Attrs = Record<string, string | number | boolean | undefined | ((e: Event) => void)>

/** An element with attributes (`on*` functions become listeners) and children (strings as text). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  set(el, attrs)
  append(el, children)
  return el
}

const SVG_NS = 'http://www.w3.org/2000/svg'

/** An SVG element. */
export function s<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag)
  set(el, attrs)
  append(el, children)
  return el
}

function set(el: Element, attrs: Attrs): void {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue
    if (typeof v === 'function') el.addEventListener(k.slice(2), v)
    else el.setAttribute(k, v === true ? '' : String(v))
  }
}

function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue
    el.append(typeof c === 'number' ? String(c) : c)
  }
}

/** `12,345`: as `inspect` prints counts. */
export function int(n: number): string {
  return Math.round(n).toLocaleString('en-US')
}

/** `12.3%` of `total` (`–` when the total is 0). */
export function pct(n: number, total: number, digits = 1): string {
  return total > 0 ? `${((n / total) * 100).toFixed(digits)}%` : '–'
}

/** `$0.0123` / `$1.25`, as `inspect` prints prices. */
export function usd(x: number): string {
  return `$${x < 0.01 ? x.toFixed(4) : x.toFixed(2)}`
}

/** `150k`, `1.2M`: an axis label. */
export function short(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(n % 1_000_000 === 0 ? 0 : 1)}M`
  if (n >= 1_000) return `${(n / 1_000).toFixed(n % 1_000 === 0 || n >= 100_000 ? 0 : 1)}k`
  return String(Math.round(n))
}

/** A message time as local date and time. */
export function when(ms: number | undefined): string {
  if (!ms) return ''
  const d = new Date(ms)
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' })
}

/** The first line of `text`, cut to `max` characters. */
export function snippet(text: string, max = 160): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/** `1 message`, `2 messages`. */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${int(n)} ${n === 1 ? word : many}`
}

/** A section card with its heading and a short line on what it shows. */
export function card(id: string, title: string, lede: string, ...body: Child[]): HTMLElement {
  return h('section', { class: 'card', id, 'aria-labelledby': `${id}-h` }, h('h2', { id: `${id}-h` }, title), lede ? h('p', { class: 'lede' }, lede) : null, ...body)
}

/** A labelled figure: `label`, the value large, a line under it. */
export function figure(label: string, value: string, sub?: string): HTMLElement {
  return h('div', { class: 'figure' }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value), sub ? h('div', { class: 'sub' }, sub) : null)
}

/** A two-column table of `[label, value]` rows, values right-aligned. */
export function pairs(rows: Array<[string, string | Node]>): HTMLTableElement {
  return h(
    'table',
    { class: 'pairs' },
    h('tbody', {}, ...rows.map(([k, v]) => h('tr', {}, h('td', { class: 'muted' }, k), h('td', { class: 'value' }, v)))),
  )
}
