// Reading the input file: a transcript of another agent (importTranscript), contextfold messages
// (JSON lines of canonical messages, as `convert --to contextfold` writes them), or a contextfold
// session store (first line `{"type":"header",...}`, read with the native SessionStore).
import { closeSync, openSync, readFileSync, readSync } from 'node:fs'

import { importTranscriptAsync } from '../../native.js'
import type { ImportStats, ImportWarning, Message, SessionOptions, TranscriptFormat } from '../../native.js'
import { CliError, EXIT, fsInputError, inputError } from './errors.js'
import { isStoreHeader, sessionStore } from './store.js'

export const TRANSCRIPT_FORMATS: readonly TranscriptFormat[] = [
  'claude-code',
  'codex',
  'pi',
  'opencode',
  'swe-agent',
  'mini-swe-agent',
  'openhands',
  'openai-chat',
  'kimi-cli',
  'copilot-cli',
  'gemini-cli',
]

/** What the input is: a transcript format, `contextfold` (messages, one per line) or `store`. */
export type InputFormat = TranscriptFormat | 'contextfold' | 'store'

export const INPUT_FORMATS: readonly InputFormat[] = ['contextfold', 'store', ...TRANSCRIPT_FORMATS]

export interface LoadedInput {
  /** The path as given (`-` for standard input). */
  file: string
  format: InputFormat
  /** Every message, hidden ones included. */
  messages: Message[]
  /** What could not be read, with 1-based line numbers (0: the whole input). */
  warnings: ImportWarning[]
  /** The importer's accounting (transcripts only). */
  stats?: ImportStats
  /** The session options a store's header records. */
  sessionOptions?: SessionOptions
}

export interface LoadOptions {
  /** Skip detection. */
  format?: InputFormat
  /** Stores: skip corrupt lines instead of failing. */
  recover?: boolean
  signal?: AbortSignal
}

const ROLES = new Set(['user', 'assistant', 'system'])
const SNIFF_BYTES = 64 * 1024

/** A canonical message, by shape (`Session.fromMessages` validates it fully). */
export function isMessageLike(v: unknown): v is Message {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false
  const m = v as Record<string, unknown>
  return typeof m.id === 'string' && typeof m.role === 'string' && ROLES.has(m.role) && Array.isArray(m.parts)
}

/** The start of a contextfold message line as `JSON.stringify` writes it, when the line is too long to parse here. */
const MESSAGE_PREFIX = /^\{"id":"(?:[^"\\]|\\.)*","role":"(?:user|assistant|system)"/
const MESSAGE_ARRAY_PREFIX = /^\[\s*\{\s*"id"\s*:\s*"/

function parse(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Guesses our own formats from the first bytes; `undefined`: let the importer detect. */
export function sniff(head: string): 'store' | 'contextfold' | undefined {
  const text = head.replace(/^\uFEFF/, '').trimStart()
  if (MESSAGE_ARRAY_PREFIX.test(text) && text.includes('"parts"')) return 'contextfold'
  if (!text.startsWith('{')) return undefined
  const nl = text.indexOf('\n')
  const line = nl < 0 ? text : text.slice(0, nl)
  const value = parse(line)
  if (value !== undefined) {
    if (isStoreHeader(value)) return 'store'
    if (isMessageLike(value)) return 'contextfold'
    return undefined
  }
  // The first line is longer than what was read (or malformed): decide on its beginning.
  if (/^\{"type":"header","version":\d/.test(line)) return 'store'
  if (MESSAGE_PREFIX.test(line) && line.includes('"parts":[')) return 'contextfold'
  return undefined
}

function readHead(file: string): string {
  let fd: number | undefined
  try {
    fd = openSync(file, 'r')
    const buf = Buffer.alloc(SNIFF_BYTES)
    const n = readSync(fd, buf, 0, SNIFF_BYTES, 0)
    return buf.subarray(0, n).toString('utf8')
  } catch (e) {
    throw fsInputError(file, e)
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer))
  return Buffer.concat(chunks).toString('utf8')
}

/** Messages written one per line (or as one JSON array); malformed lines become warnings. */
export function parseMessages(text: string, file: string): { messages: Message[]; warnings: ImportWarning[] } {
  const body = text.replace(/^\uFEFF/, '')
  const messages: Message[] = []
  const warnings: ImportWarning[] = []
  if (body.trimStart().startsWith('[')) {
    const value = parse(body)
    if (!Array.isArray(value)) throw new CliError(EXIT.INPUT, 'CF_UNKNOWN_FORMAT', `${file}: not a JSON array of contextfold messages`, { file })
    value.forEach((m, i) => {
      if (isMessageLike(m)) messages.push(m)
      else warnings.push({ line: 0, message: `element ${i} is not a message (id, role, parts); skipped` })
    })
    return { messages, warnings }
  }
  const lines = body.split('\n')
  lines.forEach((raw, i) => {
    const line = raw.trim()
    if (!line) return
    const value = parse(line)
    if (value === undefined) warnings.push({ line: i + 1, message: `malformed JSON; skipped line ${i + 1}` })
    else if (!isMessageLike(value)) warnings.push({ line: i + 1, message: `not a message (id, role, parts); skipped line ${i + 1}` })
    else messages.push(value)
  })
  if (messages.length === 0 && warnings.length > 0) {
    throw new CliError(EXIT.INPUT, 'CF_UNKNOWN_FORMAT', `${file}: no readable contextfold message (${warnings.length} line(s) skipped)`, { file })
  }
  return { messages, warnings }
}

function loadStore(file: string, head: string | undefined, recover: boolean): LoadedInput {
  const Store = sessionStore()
  if (!Store) {
    throw new CliError(
      EXIT.INPUT,
      'CF_UNSUPPORTED',
      `${file}: is a contextfold session store, and this build of contextfold has no SessionStore (update contextfold, or convert it with a build that has one)`,
      { file },
    )
  }
  let store: ReturnType<typeof Store.open> | undefined
  try {
    store = Store.open(file, { readOnly: true, recover })
    const messages = store.loadAll()
    const warnings: ImportWarning[] = (store.warnings ?? []).map((w) => ({ line: w.line, message: w.message }))
    const loaded: LoadedInput = { file, format: 'store', messages, warnings }
    const header = head === undefined ? undefined : parse(head.replace(/^\uFEFF/, '').split('\n', 1)[0] ?? '')
    if (isStoreHeader(header) && header.session && typeof header.session === 'object') loaded.sessionOptions = header.session
    return loaded
  } catch (e) {
    throw inputError(file, e)
  } finally {
    try {
      store?.close()
    } catch {
      // A read-only store holds nothing to release.
    }
  }
}

/** Reads `file` (`-`: standard input) as whatever it holds. */
export async function loadInput(file: string, options: LoadOptions = {}): Promise<LoadedInput> {
  const stdin = file === '-'
  const text = stdin ? await readStdin() : undefined
  const head = text ?? (options.format === undefined || options.format === 'store' ? readHead(file) : undefined)
  const format = options.format ?? (head !== undefined ? sniff(head) : undefined)

  if (format === 'store') {
    if (stdin) throw new CliError(EXIT.INPUT, 'CF_UNSUPPORTED', '-: a session store must be read from a file, not standard input', { file })
    return loadStore(file, head, options.recover === true)
  }
  if (format === 'contextfold') {
    let body = text
    if (body === undefined) {
      try {
        body = readFileSync(file, 'utf8')
      } catch (e) {
        throw fsInputError(file, e)
      }
    }
    return { file, format: 'contextfold', ...parseMessages(body, file) }
  }

  // A transcript: the importer reads a path, or the text itself when it starts with `{` or `[`.
  let source = file
  if (text !== undefined) {
    if (!/^[\s\uFEFF]*[[{]/.test(text)) {
      throw new CliError(EXIT.INPUT, 'CF_UNKNOWN_FORMAT', '-: not a transcript or session contextfold can read (no JSON at the start)', { file })
    }
    source = text
  }
  try {
    const result = await importTranscriptAsync(source, format ? { format } : {}, options.signal)
    return { file, format: result.format, messages: result.messages, warnings: result.warnings, stats: result.stats }
  } catch (e) {
    if (options.signal?.aborted) throw e
    throw inputError(file, e)
  }
}
