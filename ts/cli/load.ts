// Reading the input file: a transcript of another agent (importTranscript), contextfold messages
// (JSON lines of canonical messages, as `convert --to contextfold` writes them), or a contextfold
// session store (first line `{"type":"header",...}`, read with the native SessionFile).
import { closeSync, openSync, readFileSync, readSync } from 'node:fs'

import { importTranscriptAsync, isStoreHeader, SessionFile, transcriptFormats, type TranscriptSource } from '../native.js'
import type { ImportResult, ImportStats, ImportWarning, Message, SessionOptions, TranscriptFormat } from '../native.js'
import { CliError, EXIT, fsInputError, inputError } from './errors.js'
import { plural } from './format.js'
import { databaseOf, loadDatabase, type DatabaseFlags } from './database.js'

export const TRANSCRIPT_FORMATS: readonly TranscriptFormat[] = transcriptFormats()

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
  /** The system prompt and tool definitions the transcript records outside its messages. */
  overhead?: ImportResult['overhead']
}

export interface LoadOptions {
  /** Skip detection. */
  format?: InputFormat
  /** Stores: skip corrupt lines instead of failing. */
  recover?: boolean
  /** A PostgreSQL or Redis URL as the file: the session and where its entries are. */
  database?: DatabaseFlags
  signal?: AbortSignal
}

const ROLES = new Set(['user', 'assistant', 'system'])
const SNIFF_BYTES = 64 * 1024

/** Part types of canonical messages: parts of these types have an `id`. */
const PART_TYPES = new Set(['text', 'reasoning', 'tool', 'file', 'compaction'])
/** Part types only AI SDK UIMessages have (which are shaped like our messages, without part ids). */
const UI_PART = /^(?:tool-|dynamic-tool$|step-start$|source-|data-)/

function isPartLike(p: unknown): boolean {
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return false
  const { id, type } = p as { id?: unknown; type?: unknown }
  if (typeof id === 'string') return true
  return typeof type === 'string' && !PART_TYPES.has(type) && !UI_PART.test(type)
}

/** A canonical message, by shape (`Session.fromMessages` validates it fully); not a UIMessage. */
export function isMessageLike(v: unknown): v is Message {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false
  const m = v as Record<string, unknown>
  return typeof m.id === 'string' && typeof m.role === 'string' && ROLES.has(m.role) && Array.isArray(m.parts) && m.parts.every(isPartLike)
}

/** The start of a contextfold message line as `JSON.stringify` writes it, when the line is too long to parse here. */
const MESSAGE_PREFIX = /^\{"id":"(?:[^"\\]|\\.)*","role":"(?:user|assistant|system)"/
const MESSAGE_ARRAY_PREFIX = /^\[\s*\{\s*"id"\s*:\s*"/
const UI_PART_IN_TEXT = /"type"\s*:\s*"(?:tool-|dynamic-tool")/

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
  if (MESSAGE_ARRAY_PREFIX.test(text) && text.includes('"parts"')) {
    // AI SDK UIMessages look the same from afar: decide on the first message when it was read
    // whole, else on part types only UIMessages have.
    const value = parse(text)
    if (Array.isArray(value)) return isMessageLike(value[0]) ? 'contextfold' : undefined
    return UI_PART_IN_TEXT.test(text) ? undefined : 'contextfold'
  }
  if (!text.startsWith('{')) return undefined
  const nl = text.indexOf('\n')
  const line = nl < 0 ? text : text.slice(0, nl)
  const value = parse(line)
  if (value !== undefined) {
    if (isStoreHeader(line)) return 'store'
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

function loadStore(file: string, recover: boolean): LoadedInput {
  let store: SessionFile | undefined
  try {
    store = SessionFile.open(file, { readOnly: true, recover })
    const messages = store.loadAll()
    const warnings: ImportWarning[] = store.warnings.map((w) => ({ line: w.line, message: w.message }))
    const loaded: LoadedInput = { file, format: 'store', messages, warnings }
    const session = store.header?.session
    if (session) loaded.sessionOptions = session
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

/** Reads `file` (`-`: standard input; a postgres:// or redis:// URL: a session there) as whatever it holds. */
export async function loadInput(file: string, options: LoadOptions = {}): Promise<LoadedInput> {
  if (databaseOf(file)) return { format: 'store', warnings: [], ...(await loadDatabase(file, options.database ?? {})) }
  const stdin = file === '-'
  const text = stdin ? await readStdin() : undefined
  const head = text ?? (options.format === undefined || options.format === 'store' ? readHead(file) : undefined)
  const format = options.format ?? (head !== undefined ? sniff(head) : undefined)

  if (format === 'store') {
    if (stdin) throw new CliError(EXIT.INPUT, 'CF_UNSUPPORTED', '-: a session store must be read from a file, not standard input', { file })
    return loadStore(file, options.recover === true)
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
    if (options.format === undefined) return { file, format: 'contextfold', ...parseMessages(body, file) }
    let parsed: ReturnType<typeof parseMessages>
    try {
      parsed = parseMessages(body, file)
    } catch (e) {
      throw e instanceof CliError ? wrongFormat(file, 'contextfold', e.message) : e
    }
    if (parsed.messages.length === 0 && parsed.warnings.length > 0) throw wrongFormat(file, 'contextfold', `${file}: read as contextfold messages, it holds none`)
    return { file, format: 'contextfold', ...parsed }
  }

  // A transcript: the file, or the text read from standard input.
  let source: TranscriptSource = { path: file }
  if (text !== undefined) {
    if (!/^[\s\uFEFF]*[[{]/.test(text)) {
      throw new CliError(EXIT.INPUT, 'CF_UNKNOWN_FORMAT', '-: not a transcript or session contextfold can read (no JSON at the start)', { file })
    }
    source = { text }
  }
  let result: Awaited<ReturnType<typeof importTranscriptAsync>>
  try {
    result = await importTranscriptAsync(source, format ? { format } : {}, options.signal)
  } catch (e) {
    if (options.signal?.aborted) throw e
    throw inputError(file, e)
  }
  // A detected transcript that reads no message is nothing to work on (the importer already
  // refused one whose records it could not read): an empty conversation is read with --format.
  if (format === undefined && result.messages.length === 0) {
    throw new CliError(
      EXIT.INPUT,
      'CF_UNKNOWN_FORMAT',
      `${file}: read as ${result.format}, it holds no messages (--format ${result.format} reads it as an empty conversation)`,
      { file },
    )
  }
  // A format forced with --format that reads no message is the wrong one, unless detection finds
  // the same format (the transcript is empty).
  if (format !== undefined && result.messages.length === 0) {
    let detected: Awaited<ReturnType<typeof importTranscriptAsync>> | undefined
    try {
      detected = await importTranscriptAsync(source, {}, options.signal)
    } catch (e) {
      if (options.signal?.aborted) throw e
    }
    if (detected?.format !== format) {
      const skipped = result.warnings.length > 0 ? ` (${plural(result.warnings.length, 'warning')})` : ''
      const looks = detected && detected.messages.length > 0 ? `; it reads as ${detected.format} (${plural(detected.messages.length, 'message')})` : ''
      throw wrongFormat(file, format, `${file}: read as ${format}, it holds no messages${skipped}${looks}`)
    }
  }
  const loaded: LoadedInput = { file, format: result.format, messages: result.messages, warnings: result.warnings, stats: result.stats }
  if (result.overhead) loaded.overhead = result.overhead
  return loaded
}

/** The input read as a format given with --format gave nothing: exit 3, with the flag to change. */
function wrongFormat(file: string, format: InputFormat, message: string): CliError {
  return new CliError(EXIT.INPUT, 'CF_UNKNOWN_FORMAT', `${message}: --format ${format} does not fit this file (leave --format out to detect the format)`, { file })
}
