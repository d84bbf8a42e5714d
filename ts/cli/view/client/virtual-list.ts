// A list of fixed-height rows that renders only the rows in view (and a few around them): 10,000
// messages scroll as lightly as 10.
import { h } from './dom.js'

export interface VirtualListOptions<T> {
  rowHeight: number
  render: (item: T, index: number) => HTMLElement
  /** Text shown when there is no row. */
  empty: string
  className?: string
  label: string
}

const OVERSCAN = 8

export class VirtualList<T> {
  readonly el: HTMLElement
  private readonly spacer: HTMLElement
  private items: readonly T[] = []
  private drawn = new Map<number, HTMLElement>()
  private frame = 0

  constructor(private readonly options: VirtualListOptions<T>) {
    this.spacer = h('div', { class: 'spacer' })
    this.el = h('div', { class: `vlist ${options.className ?? ''}`, role: 'list', 'aria-label': options.label, tabindex: 0 }, this.spacer)
    this.el.addEventListener('scroll', () => this.schedule())
    window.addEventListener('resize', () => this.schedule())
  }

  /** Shows `items`, scrolled back to the top. */
  set(items: readonly T[]): void {
    this.items = items
    this.el.scrollTop = 0
    this.redraw()
  }

  /** Draws every row in view again (after a change of what they show). */
  redraw(): void {
    for (const row of this.drawn.values()) row.remove()
    this.drawn.clear()
    this.el.querySelector('.empty')?.remove()
    this.spacer.style.height = `${this.items.length * this.options.rowHeight}px`
    if (this.items.length === 0) this.el.append(h('div', { class: 'empty' }, this.options.empty))
    this.draw()
  }

  /** Scrolls row `index` into view. */
  reveal(index: number): void {
    const top = index * this.options.rowHeight
    const view = this.el.clientHeight
    if (top < this.el.scrollTop || top + this.options.rowHeight > this.el.scrollTop + view) {
      this.el.scrollTop = Math.max(0, top - view / 3)
    }
    this.draw()
  }

  private schedule(): void {
    if (this.frame) return
    this.frame = requestAnimationFrame(() => {
      this.frame = 0
      this.draw()
    })
  }

  private draw(): void {
    const { rowHeight } = this.options
    const height = this.el.clientHeight || 560
    const first = Math.max(0, Math.floor(this.el.scrollTop / rowHeight) - OVERSCAN)
    const last = Math.min(this.items.length, Math.ceil((this.el.scrollTop + height) / rowHeight) + OVERSCAN)
    for (const [i, row] of this.drawn) {
      if (i < first || i >= last) {
        row.remove()
        this.drawn.delete(i)
      }
    }
    for (let i = first; i < last; i++) {
      if (this.drawn.has(i)) continue
      const row = this.options.render(this.items[i]!, i)
      row.classList.add('row')
      row.setAttribute('role', 'listitem')
      row.style.top = `${i * rowHeight}px`
      row.style.height = `${rowHeight}px`
      this.spacer.append(row)
      this.drawn.set(i, row)
    }
  }
}
