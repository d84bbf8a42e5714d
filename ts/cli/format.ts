// Text helpers for the human-readable output: colours (on a terminal only), numbers, alignment.
import pc from 'picocolors'

export type Colors = ReturnType<typeof pc.createColors>

/**
 * Colours on when stdout is a terminal (and `TERM` is not `dumb`), unless `NO_COLOR` is set or
 * `--no-color` is given; `FORCE_COLOR` (other than `0`) forces them on.
 */
export function colorsFor(stream: { isTTY?: boolean }, flag: boolean | undefined, env: NodeJS.ProcessEnv = process.env): Colors {
  let on: boolean
  if (flag === false || (env.NO_COLOR !== undefined && env.NO_COLOR !== '')) on = false
  else if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '') on = env.FORCE_COLOR !== '0'
  else on = stream.isTTY === true && env.TERM !== 'dumb'
  return pc.createColors(on)
}

/** `12,345`. */
export function int(n: number): string {
  return Math.round(n).toLocaleString('en-US')
}

/** `12.3%` of `total` (`–` when the total is 0). */
export function pct(n: number, total: number, digits = 1): string {
  if (!(total > 0)) return '–'
  return `${((n / total) * 100).toFixed(digits)}%`
}

/** Visible length (ANSI escapes removed). */
export function visible(s: string): number {
  // eslint-disable-next-line no-control-regex
  return s.replace(/\x1b\[[0-9;]*m/g, '').length
}

export function padEnd(s: string, width: number): string {
  return s + ' '.repeat(Math.max(0, width - visible(s)))
}

export function padStart(s: string, width: number): string {
  return ' '.repeat(Math.max(0, width - visible(s))) + s
}

/** The first line of `text`, cut to `max` characters. */
export function snippet(text: string, max = 60): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/** `1 message`, `2 messages`. */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${int(n)} ${n === 1 ? word : many}`
}

/** Rows of cells, columns padded to their widest cell; `right` lists right-aligned columns. */
export function table(rows: string[][], right: ReadonlySet<number> = new Set(), indent = '  '): string[] {
  const widths: number[] = []
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, visible(cell))))
  return rows.map(
    (row) =>
      indent +
      row
        .map((cell, i) => {
          if (i === row.length - 1 && !right.has(i)) return cell
          return right.has(i) ? padStart(cell, widths[i]!) : padEnd(cell, widths[i]!)
        })
        .join('  ')
        .trimEnd(),
  )
}
