// Message builders and small assertion helpers shared by the specs.
import { expect } from 'vitest'

import { Session } from '../native.js'
import type {
  CompactionConfig,
  FilePart,
  Message,
  ModelInfo,
  ModelMessage,
  Part,
  SessionOptions,
  ToolPart,
  ToolState,
} from '../native.js'

/** The marker opencode (and contextfold) put in place of a pruned tool output. */
export const PRUNED = '[Old tool result content cleared]'
/** The result given to a tool call that never finished. */
export const INTERRUPTED = '[Tool execution was interrupted]'

/** A 200k window with a 64k output limit: usable = 200000 − min(64000, 32000) = 168000. */
export const MODEL: ModelInfo = { providerID: 'test', modelID: 'test-model', limit: { context: 200_000, output: 64_000 } }

/** Session options counting exactly with o200k (so expected values can be computed with `countTokens`). */
export function exact(compaction?: CompactionConfig, model: ModelInfo = MODEL): SessionOptions {
  return { model, compaction, tokenizer: 'o200k' }
}

let partSeq = 0
/** A fresh part id. */
export function pid(prefix = 'p'): string {
  return `${prefix}${++partSeq}`
}

/** `n` o200k (and cl100k) tokens exactly: " hello" is one token in both encodings. */
export function words(n: number): string {
  return ' hello'.repeat(n)
}

export function text(t: string, id = pid()): Part {
  return { type: 'text', id, text: t }
}

export function reasoning(t: string, id = pid()): Part {
  return { type: 'reasoning', id, text: t }
}

export function file(mime: string, url: string, filename?: string, id = pid()): FilePart {
  const f: FilePart = { type: 'file', id, mime, url }
  if (filename !== undefined) f.filename = filename
  return f
}

export function tool(callID: string, name: string, state: ToolState, id = pid('t')): ToolPart {
  return { type: 'tool', id, callID, tool: name, state }
}

export function completed(output: string, input: unknown = {}, extra: Record<string, unknown> = {}): ToolState {
  return { status: 'completed', input, output, ...extra } as ToolState
}

export function failedTool(error: string, input: unknown = {}): ToolState {
  return { status: 'error', input, error }
}

export function pending(input: unknown = {}): ToolState {
  return { status: 'pending', input }
}

export function running(input: unknown = {}): ToolState {
  return { status: 'running', input }
}

export function user(id: string, body: string | Part[] = `question ${id}`, extra: Partial<Message> & Record<string, unknown> = {}): Message {
  const parts = typeof body === 'string' ? [text(body)] : body
  return { id, role: 'user', parts, ...extra }
}

export function system(id: string, body: string): Message {
  return { id, role: 'system', parts: [text(body)] }
}

export function assistant(id: string, body: string | Part[] = `answer ${id}`, extra: Partial<Message> & Record<string, unknown> = {}): Message {
  const parts = typeof body === 'string' ? [text(body)] : body
  return { id, role: 'assistant', parts, ...extra }
}

/** A finished assistant answer that reports provider usage. */
export function answered(id: string, tokens: Message['tokens'], body: string | Part[] = `answer ${id}`): Message {
  return assistant(id, body, { finish: 'stop', tokens })
}

/** A compaction request: a user message whose only part is a `compaction` part. */
export function request(
  id: string,
  opts: { tailStartID?: string; hiddenFromID?: string; auto?: boolean; overflow?: boolean } = {},
): Message {
  const part: Record<string, unknown> = { type: 'compaction', id: pid('c'), auto: opts.auto ?? true }
  if (opts.tailStartID !== undefined) part.tailStartID = opts.tailStartID
  if (opts.hiddenFromID !== undefined) part.hiddenFromID = opts.hiddenFromID
  if (opts.overflow !== undefined) part.overflow = opts.overflow
  return { id, role: 'user', parts: [part as Part] }
}

/** A summary answering the compaction request `parentID`; completed unless told otherwise. */
export function summary(
  id: string,
  parentID: string,
  opts: { finish?: string | null; error?: Message['error']; tokens?: Message['tokens']; body?: string } = {},
): Message {
  const m: Message = {
    id,
    role: 'assistant',
    parentID,
    summary: true,
    parts: [text(opts.body ?? `summary of everything before ${parentID}`)],
  }
  if (opts.finish !== null) m.finish = opts.finish ?? 'stop'
  if (opts.error) m.error = opts.error
  if (opts.tokens) m.tokens = opts.tokens
  return m
}

export const ids = (ms: Message[]): string[] => ms.map((m) => m.id)

/** The local (o200k) token count of one message on its own, as a session counts it. */
export function msgTokens(m: Message, tokenizer: 'o200k' | 'cl100k' | 'estimate' = 'o200k'): number {
  const copy = { ...m }
  delete copy.tokens // provider usage would replace the local count
  const s = new Session({ model: MODEL, tokenizer })
  s.append(copy)
  const u = s.usage()
  expect(u.source).toBe('estimate')
  return u.tokens
}

export function sumTokens(ms: Message[], tokenizer: 'o200k' | 'cl100k' | 'estimate' = 'o200k'): number {
  return ms.reduce((n, m) => n + msgTokens(m, tokenizer), 0)
}

/** Runs `fn`, expects it to throw an `Error` with `code`, returns the error. */
export function expectCode(fn: () => unknown, code: string): Error & { code: string } {
  let thrown: unknown
  try {
    fn()
  } catch (e) {
    thrown = e
  }
  expect(thrown, `expected a ${code} error`).toBeInstanceOf(Error)
  expect((thrown as { code?: unknown }).code).toBe(code)
  return thrown as Error & { code: string }
}

/** Awaits `p`, expects it to reject with an `Error` with `code`, returns the error. */
export async function expectRejectCode(p: Promise<unknown>, code: string): Promise<Error & { code: string }> {
  let thrown: unknown
  try {
    await p
  } catch (e) {
    thrown = e
  }
  expect(thrown, `expected a ${code} rejection`).toBeInstanceOf(Error)
  expect((thrown as { code?: unknown }).code).toBe(code)
  return thrown as Error & { code: string }
}

/** A snapshot of everything observable about a session, for "left exactly as it was" checks. */
export function snapshot(s: Session) {
  return {
    length: s.length,
    messages: s.messages(),
    context: s.context(),
    usage: s.usage(),
    modelMessages: s.toModelMessages(),
  }
}

/**
 * Checks the tool-pair rule on model messages: every tool-call has exactly one tool-result with its
 * id in the tool message right after its assistant message, no result lacks its call, and all
 * call ids are unique. Returns the number of calls seen.
 */
export function checkToolPairs(out: ModelMessage[]): number {
  const seen = new Set<string>()
  let calls = 0
  for (let i = 0; i < out.length; i++) {
    const m = out[i]
    if (m.role === 'tool') {
      const prev = out[i - 1]
      expect(prev?.role, `tool message at ${i} must follow an assistant message`).toBe('assistant')
      const callIds = (prev as Extract<ModelMessage, { role: 'assistant' }>).content
        .filter((c) => c.type === 'tool-call')
        .map((c) => (c as { toolCallId: string }).toolCallId)
      for (const r of m.content) {
        expect(r.type).toBe('tool-result')
        expect(callIds, `result ${r.toolCallId} lacks its call`).toContain(r.toolCallId)
      }
      continue
    }
    if (m.role !== 'assistant') continue
    const callsHere = m.content.filter((c) => c.type === 'tool-call') as Array<{ toolCallId: string; toolName: string }>
    if (callsHere.length === 0) continue
    const next = out[i + 1]
    expect(next?.role, `assistant message at ${i} has tool calls but no tool message after it`).toBe('tool')
    const results = (next as Extract<ModelMessage, { role: 'tool' }>).content
    for (const c of callsHere) {
      expect(seen.has(c.toolCallId), `duplicate toolCallId ${c.toolCallId}`).toBe(false)
      seen.add(c.toolCallId)
      const matching = results.filter((r) => r.toolCallId === c.toolCallId)
      expect(matching.length, `call ${c.toolCallId} must have exactly one result`).toBe(1)
      expect(matching[0].toolName).toBe(c.toolName)
      calls++
    }
    expect(results.length).toBe(callsHere.length)
  }
  return calls
}

/**
 * Reference model of `filterCompacted` written from DESIGN §3/§4 and src/policy/view.rs: the newest
 * compaction request answered by a completed summary (`summary && finish && !error`) decides; it
 * hides `[hiddenFromID or 0, tailStartID)` (a missing / not-earlier tail id keeps no tail; a
 * hiddenFromID after the tail start is ignored), and the context reads: the head before the hidden
 * range (itself seen through the compactions inside it), request … summary, the kept tail without
 * earlier compaction requests and summaries, then everything after the summary.
 */
/**
 * The compaction rule read literally (DESIGN §3, src/policy/view.rs): the newest completed
 * summary among the first `len` messages replaces, in the context of everything before its
 * request, the run from `hiddenFromID` (or the start) up to `tailStartID` (or the end) with the
 * request and the summary; what follows the summary comes after the kept tail.
 */
export function referenceView(ms: Message[], len = ms.length): { order: number[]; cut?: { request: number; summary: number } } {
  let summary = -1
  for (let s = len - 1; s >= 0 && summary < 0; s--) {
    const m = ms[s]
    if (isCompletedSummary(m) && ms.slice(0, s).some((r) => r.id === m.parentID && compactionPartOf(r))) summary = s
  }
  if (summary < 0) return { order: Array.from({ length: len }, (_, i) => i) }
  let request = summary - 1
  while (ms[request].id !== ms[summary].parentID) request--
  const before = referenceView(ms, request).order
  const part = compactionPartOf(ms[request])!
  const find = (id: unknown) => (typeof id === 'string' ? before.findIndex((p) => ms[p].id === id) : -1)
  const t = find(part.tailStartID)
  const tail = t < 0 ? before.length : t
  const h = find(part.hiddenFromID)
  const head = h >= 0 && h <= tail ? h : 0
  const order = [...before.slice(0, head)]
  for (let k = request; k <= summary; k++) order.push(k)
  order.push(...before.slice(tail))
  for (let k = summary + 1; k < len; k++) order.push(k)
  return { order, cut: { request, summary } }
}

const isCompletedSummary = (m: Message) =>
  m.role === 'assistant' && m.summary === true && typeof m.finish === 'string' && m.finish !== '' && m.error == null
const compactionPartOf = (m: Message) =>
  m.role === 'user' ? (m.parts.find((p) => p.type === 'compaction') as Record<string, unknown> | undefined) : undefined

/** A small deterministic PRNG (mulberry32) for building varied but reproducible text. */
export function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
