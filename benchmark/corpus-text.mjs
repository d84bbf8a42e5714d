// Real message and tool-output text from the transcript corpus, shared by every benchmark so all
// tokenizers and the session see the same bytes.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

export const CORPUS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'shared', 'corpus')

const MIN_CHARS = 16
// Images and other binary payloads are not text a tokenizer meets in a prompt (they are sent as
// media), and one megabyte-long base64 "word" only measures the JS tokenizers' quadratic worst case.
const BINARY = /^(data:[^,]{0,100},)?[A-Za-z0-9+/=\r\n]{512,}$/
// Special-token markers: the JS tokenizers throw on them by default while contextfold counts them
// as ordinary text; leaving them out keeps the four comparable on identical input.
const SPECIAL = /<\|[A-Za-z0-9_]{1,40}\|>/

/** Deterministic PRNG (mulberry32) so every run draws the same sample. */
export function rng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The corpus's transcript files, in a stable order. */
export function corpusFiles(dir = CORPUS_DIR) {
  const out = []
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) out.push(...corpusFiles(path))
    else if (/\.(jsonl|json|traj)$/.test(name)) out.push(path)
  }
  return out
}

// Files are JSON lines, pretty-printed JSON or single JSON documents; malformed lines are skipped.
function parseDocuments(raw) {
  try {
    return [JSON.parse(raw)]
  } catch {
    const docs = []
    for (const line of raw.split('\n')) {
      if (!line.trim()) continue
      try {
        docs.push(JSON.parse(line))
      } catch {}
    }
    return docs
  }
}

function collectStrings(value, into) {
  if (typeof value === 'string') {
    if (value.length >= MIN_CHARS && !BINARY.test(value) && !SPECIAL.test(value)) into.add(value)
  } else if (Array.isArray(value)) {
    for (const v of value) collectStrings(v, into)
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) collectStrings(v, into)
  }
}

let cached
/** Every distinct string value of at least 16 chars in the corpus, file by file. */
export function corpusStrings() {
  if (cached) return cached
  const seen = new Set()
  for (const file of corpusFiles()) {
    for (const doc of parseDocuments(readFileSync(file, 'utf8'))) collectStrings(doc, seen)
  }
  if (seen.size === 0) throw new Error(`no text found under ${CORPUS_DIR}`)
  cached = [...seen]
  return cached
}

// Cuts at a line break (else a space) near `max`, never inside a surrogate pair.
function cutPoint(s, max) {
  if (s.length <= max) return s.length
  let at = s.lastIndexOf('\n', max)
  if (at < max / 2) at = s.lastIndexOf(' ', max)
  if (at < max / 2) at = max
  if (at > 0 && at < s.length) {
    const c = s.charCodeAt(at - 1)
    if (c >= 0xd800 && c <= 0xdbff) at -= 1
  }
  return at
}

/**
 * Message-sized chunks (uniform 1-20 KB) of shuffled corpus strings, about `targetBytes` of UTF-8
 * in total. Strings are joined with newlines the way a transcript would hold them.
 */
export function corpusChunks({ targetBytes = 8e6, minChars = 1024, maxChars = 20480, seed = 42 } = {}) {
  const rand = rng(seed)
  const pool = corpusStrings().slice()
  for (let i = pool.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1))
    ;[pool[i], pool[j]] = [pool[j], pool[i]]
  }
  const chunks = []
  let bytes = 0
  let next = 0
  let rest = ''
  while (bytes < targetBytes) {
    const size = minChars + Math.floor(rand() * (maxChars - minChars))
    let chunk = ''
    while (chunk.length < size) {
      if (!rest) {
        if (next >= pool.length) break
        rest = pool[next++]
      }
      const room = size - chunk.length
      const at = cutPoint(rest, room)
      chunk += (chunk ? '\n' : '') + rest.slice(0, at)
      rest = rest.slice(at)
    }
    if (!chunk) break
    chunks.push(chunk)
    bytes += Buffer.byteLength(chunk)
  }
  return { chunks, bytes }
}

/** Text of at most `maxChars`, cut cleanly, for tool outputs and short messages. */
export function clip(s, maxChars) {
  return s.slice(0, cutPoint(s, maxChars))
}
