// Sessions and small helpers for the compact() / summarizer / AutoCompactor specs (built package entry).
import { Session } from '../dist/index.js'
import type { CompactionConfig, Message, Part, SessionOptions, ToolState } from '../dist/index.js'
import type { ModelInfo } from '../dist/native.js'

/** usable = 32000 − 4000 = 28000. */
export const MODEL: ModelInfo = { providerID: 'test', modelID: 'test-model', limit: { context: 32_000, output: 4_000 } }

export function options(compaction: CompactionConfig = {}, model: ModelInfo = MODEL): SessionOptions {
  return { model, compaction, tokenizer: 'estimate' }
}

let seq = 0
export const pid = (prefix = 'pt') => `${prefix}${++seq}`

export function text(t: string): Part {
  return { type: 'text', id: pid(), text: t }
}

/** A tool part; `state` may carry fields the message model keeps without naming (opencode's `time`). */
export function tool(name: string, state: ToolState & Record<string, unknown>): Part {
  return { type: 'tool', id: pid('tp'), callID: pid('call'), tool: name, state }
}

export function user(id: string, body: string | Part[], extra: Partial<Message> & Record<string, unknown> = {}): Message {
  return { id, role: 'user', parts: typeof body === 'string' ? [text(body)] : body, ...extra }
}

export function assistant(id: string, body: string | Part[], extra: Partial<Message> & Record<string, unknown> = {}): Message {
  return { id, role: 'assistant', parts: typeof body === 'string' ? [text(body)] : body, ...extra }
}

/** Deterministic filler prose of about `n` words. */
export function filler(n: number, seed = 'x'): string {
  const words = ['alpha', 'parser', 'render', 'buffer', 'module', 'vector', 'signal', 'report', 'column', 'stream']
  const out: string[] = []
  for (let i = 0; i < n; i++) out.push(words[(i * 7 + seed.length) % words.length]!)
  return out.join(' ')
}

/** Everything observable about a session, for "left exactly as it was" checks. */
export function snapshot(s: Session) {
  return { length: s.length, messages: s.messages(), context: s.context(), usage: s.usage(), model: s.toModelMessages() }
}

/** The text of every part of `messages`, for "does the context still say X" checks. */
export function contextText(s: Session): string {
  return JSON.stringify(s.toModelMessages())
}

export const CONSTRAINT = 'Never use the `any` type in src/report/, and always run `npm test` before saying you are done.'
export const LAST_ERROR = "error TS2322: Type 'string' is not assignable to type 'ReportRow' (src/report/mod37.ts:12:5)"
export const EARLIER_ERROR = "ENOENT: no such file or directory, open 'fixtures/old-report.json'"

/**
 * 45 turns: the request in turn 1, a user constraint in turn 2, an edit of `src/report/modN.ts` in
 * each of turns 3–40, an earlier error in turn 20 and the last error in turn 37, then small turns.
 */
export function plantedSession(compaction: CompactionConfig = { preserveRecentTokens: 600 }): {
  session: Session
  modified: string[]
} {
  const s = new Session(options(compaction))
  const modified: string[] = []
  s.append(user('u1', 'Add a --json flag to the `report` command of the CLI.'))
  s.append(
    assistant('a1', [
      text('Reading the CLI entry point.'),
      tool('read', { status: 'completed', input: { path: 'src/cli.ts' }, output: filler(150, 'cli') }),
    ]),
  )
  s.append(user('u2', CONSTRAINT))
  s.append(assistant('a2', 'Understood.'))
  for (let t = 3; t <= 45; t++) {
    if (t > 40) {
      s.append(user(`u${t}`, `Follow-up ${t}: tidy the help text.`))
      s.append(assistant(`a${t}`, `Tidied the help text (${t}). ${filler(80, `f${t}`)}`))
      continue
    }
    const path = `src/report/mod${t}.ts`
    modified.push(path)
    s.append(user(`u${t}`, `Step ${t}: port the ${t}th report column to the JSON writer.`))
    const parts: Part[] = [
      tool('edit', { status: 'completed', input: { path, oldString: 'a', newString: 'b' }, output: filler(120, path) }),
    ]
    if (t === 20) parts.push(tool('bash', { status: 'error', input: { command: 'cat fixtures/old-report.json' }, error: EARLIER_ERROR }))
    if (t === 37) parts.push(tool('bash', { status: 'error', input: { command: 'npx tsc --noEmit' }, error: LAST_ERROR }))
    parts.push(text(`Ported column ${t}.`))
    s.append(assistant(`a${t}`, parts))
  }
  return { session: s, modified }
}

/** `turns` small turns with an edit each (`src/fN.ts`), a tail of about the last two turns. */
export function smallSession(turns = 8, compaction: CompactionConfig = { preserveRecentTokens: 400 }): Session {
  const s = new Session(options(compaction))
  for (let t = 1; t <= turns; t++) {
    s.append(user(`u${t}`, `Request ${t}: ${filler(30, `u${t}`)}`))
    s.append(
      assistant(`a${t}`, [
        tool('edit', { status: 'completed', input: { path: `src/f${t}.ts` }, output: filler(60, `o${t}`) }),
        text(`Done with request ${t}.`),
      ]),
    )
  }
  return s
}

/**
 * Three small turns, then one long turn (a request and ten tool steps): the verbatim tail is a
 * suffix of that turn, so the plan has a turn prefix.
 */
export function splitTurnSession(): Session {
  const s = new Session(options({ preserveRecentTokens: 500 }))
  for (let t = 1; t <= 3; t++) {
    s.append(user(`u${t}`, `Earlier request ${t}: ${filler(40, `e${t}`)}`))
    s.append(assistant(`a${t}`, `Answered ${t}. ${filler(40, `r${t}`)}`))
  }
  s.append(user('u4', 'Long request: migrate every module to ESM.'))
  for (let k = 1; k <= 10; k++) {
    s.append(
      assistant(`s${k}`, [
        tool('edit', { status: 'completed', input: { path: `lib/m${k}.js` }, output: filler(60, `m${k}`) }),
      ]),
    )
  }
  return s
}
