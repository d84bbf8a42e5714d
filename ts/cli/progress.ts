// A one-line spinner on stderr for long work (import, summarizing). Silent unless stderr is a
// terminal and the output is for humans: `--json`, pipes and CI logs get nothing.

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']
const INTERVAL_MS = 80

export interface ProgressStream {
  isTTY?: boolean
  columns?: number
  write(chunk: string): boolean
}

export class Progress {
  readonly enabled: boolean
  readonly #stream: ProgressStream
  #text = ''
  #frame = 0
  #started = 0
  #timer: ReturnType<typeof setInterval> | undefined

  constructor(enabled: boolean, stream: ProgressStream = process.stderr) {
    this.#stream = stream
    this.enabled = enabled && stream.isTTY === true
  }

  /** Shows `text` with a spinner and the elapsed time (from the first `start`). */
  start(text: string): void {
    this.#text = text
    if (!this.enabled) return
    if (!this.#timer) {
      this.#started = Date.now()
      this.#timer = setInterval(() => this.#render(), INTERVAL_MS)
      this.#timer.unref()
    }
    this.#render()
  }

  update(text: string): void {
    if (this.#timer) this.start(text)
    else this.#text = text
  }

  /** Clears the line. */
  stop(): void {
    if (!this.#timer) return
    clearInterval(this.#timer)
    this.#timer = undefined
    this.#stream.write('\r\x1b[K')
  }

  #render(): void {
    const secs = (Date.now() - this.#started) / 1000
    const elapsed = secs >= 1 ? ` ${secs.toFixed(0)}s` : ''
    const frame = FRAMES[this.#frame++ % FRAMES.length]
    const width = Math.max(20, (this.#stream.columns || 80) - 1)
    let line = `${frame} ${this.#text}${elapsed}`
    if (line.length > width) line = `${line.slice(0, width - 1)}…`
    this.#stream.write(`\r\x1b[K${line}`)
  }
}
