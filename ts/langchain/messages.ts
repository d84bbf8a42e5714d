// LangChain `BaseMessage`s <-> the AI SDK `ModelMessage` shape the native session takes. The way in
// is for counting, pruning and summarizing: every message keeps its origin, and the way out hands
// back the very `BaseMessage` object for each message the session left as it came (provider-native
// blocks, ids and metadata untouched); only what the session changed (a pruned tool output, a
// summary) becomes a new message.
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages'

import type { ModelMessageLike, Usage } from '../native.js'
import { usageFromProvider } from '../native.js'

type Json = Record<string, unknown>
const obj = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined)

/** The key a message made by contextfold keeps its session form under, in `response_metadata`. */
const STASH = 'contextfold'

/** A message's type (`human`, `ai`, `tool`, `system`...), across @langchain/core 1.x. */
export function typeOf(m: BaseMessage): string {
  const t = (m as { type?: unknown }).type
  return typeof t === 'string' ? t : m._getType()
}

/** Whether `a` and `b` hold the same JSON value, whatever the order of their keys (the session hands its messages back with keys in its own order). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  if (a instanceof Uint8Array || b instanceof Uint8Array) return a instanceof Uint8Array && b instanceof Uint8Array && Buffer.compare(a, b) === 0
  const x = a as Json
  const y = b as Json
  const keys = Object.keys(x).filter((k) => x[k] !== undefined)
  if (keys.length !== Object.keys(y).filter((k) => y[k] !== undefined).length) return false
  for (const k of keys) if (!sameValue(x[k], y[k])) return false
  return true
}

/** A text of a message content: strings, and the text of text blocks. */
export function textOfContent(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .map((b) => {
      const o = obj(b)
      return o && (o.type === 'text' || o.type === 'text-plain') && typeof o.text === 'string' ? o.text : ''
    })
    .join('')
}

/** A media block (`image`, `image_url`, `file`, `audio`, `video`) as a user `image` / `file` part; undefined for any other block. */
function mediaPart(b: Json): Json | undefined {
  if (b.type === 'image_url') {
    const url = typeof b.image_url === 'string' ? b.image_url : obj(b.image_url)?.url
    return typeof url === 'string' ? { type: 'image', image: url } : undefined
  }
  if (b.type !== 'image' && b.type !== 'file' && b.type !== 'audio' && b.type !== 'video') return undefined
  const data = b.url ?? b.data ?? (b.source_type === 'base64' || b.source_type === 'url' ? b.data ?? b.url : undefined)
  if (typeof data !== 'string' && !(data instanceof Uint8Array)) return undefined
  const mediaType = (b.mimeType ?? b.mime_type) as string | undefined
  if (b.type === 'image') return { type: 'image', image: data, ...(mediaType ? { mediaType } : {}) }
  return { type: 'file', data, mediaType: mediaType ?? 'application/octet-stream' }
}

/** Human / system content as user parts: text, media; any other block kept as it came. */
function userContent(content: unknown): unknown {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return String(content ?? '')
  return content.map((b) => {
    const o = obj(b)
    if (!o) return { type: 'text', text: String(b) }
    if (o.type === 'text' && typeof o.text === 'string') return { type: 'text', text: o.text }
    return mediaPart(o) ?? o
  })
}

/** Blocks of an AIMessage's content that repeat its `tool_calls` (Anthropic's `tool_use`, the v1 `tool_call`). */
const CALL_BLOCKS = new Set(['tool_use', 'tool_call', 'tool_call_chunk', 'input_json_delta', 'server_tool_use'])

/** Each message's session form, converted once: a thread's messages come back on every call. */
const forms = new WeakMap<BaseMessage, { text: unknown; form: unknown }>()
function cached<T>(m: BaseMessage, convert: () => T): T {
  const hit = forms.get(m)
  // Keyed by the content object too: a message edited in place is converted again.
  if (hit && hit.text === m.content) return hit.form as T
  const form = convert()
  forms.set(m, { text: m.content, form })
  return form
}

/** An AIMessage as an assistant message: text, reasoning (Anthropic thinking with its signature), one tool-call part per tool call. */
function assistantMessage(m: AIMessage): ModelMessageLike {
  const parts: unknown[] = []
  const content = m.content as unknown
  if (typeof content === 'string') {
    if (content) parts.push({ type: 'text', text: content })
  } else if (Array.isArray(content)) {
    for (const b of content) {
      const o = obj(b)
      if (!o) continue
      if (o.type === 'text' && typeof o.text === 'string') parts.push({ type: 'text', text: o.text })
      else if (o.type === 'reasoning' && typeof o.reasoning === 'string') parts.push({ type: 'reasoning', text: o.reasoning })
      else if (o.type === 'thinking' && typeof o.thinking === 'string')
        parts.push({ type: 'reasoning', text: o.thinking, ...(typeof o.signature === 'string' ? { providerOptions: { anthropic: { signature: o.signature } } } : {}) })
      else if (o.type === 'redacted_thinking' && typeof o.data === 'string') parts.push({ type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: o.data } } })
      else if (typeof o.type === 'string' && CALL_BLOCKS.has(o.type)) continue
      // Unknown blocks go to the session as they are: counted, kept in place, reported.
      else parts.push(o)
    }
  }
  for (const call of m.tool_calls ?? []) {
    parts.push({ type: 'tool-call', toolCallId: call.id ?? '', toolName: call.name, input: call.args ?? {} })
  }
  if (typeof content === 'string' && parts.length === 1 && !m.tool_calls?.length) return { role: 'assistant', content }
  return { role: 'assistant', content: parts }
}

/** A ToolMessage's content as a tool-result output. */
function toolOutput(m: ToolMessage): Json {
  const error = m.status === 'error'
  const content = m.content as unknown
  if (typeof content === 'string') return { type: error ? 'error-text' : 'text', value: content }
  const blocks = Array.isArray(content) ? content : []
  if (blocks.every((b) => obj(b)?.type === 'text')) return { type: error ? 'error-text' : 'text', value: textOfContent(blocks) }
  return {
    type: 'content',
    value: blocks.map((b) => {
      const o = obj(b) ?? {}
      if (o.type === 'text' && typeof o.text === 'string') return { type: 'text', text: o.text }
      const media = mediaPart(o)
      if (media?.type === 'image') return { type: 'media', data: media.image, mediaType: media.mediaType ?? 'image/png' }
      if (media?.type === 'file') return { type: 'media', data: media.data, mediaType: media.mediaType }
      return { type: 'text', text: JSON.stringify(o) }
    }),
  }
}

/** The session form kept on a message contextfold made (a summary, in the checkpoint when it is compacted), if any. */
function stashed(m: BaseMessage): ModelMessageLike | undefined {
  const s = obj(obj(m.response_metadata)?.[STASH])
  const message = obj(s?.message)
  if (!message || typeof message.role !== 'string') return undefined
  // Edited since: what it holds now counts.
  return s!.text === textOfContent(m.content) ? (message as unknown as ModelMessageLike) : undefined
}

/** The request's messages in the session's form, and where each came from. */
export interface Converted {
  /** Leading system messages the app put in `messages` (the agent's own prompt is the request's `systemMessage`). */
  system: BaseMessage[]
  messages: ModelMessageLike[]
  /** The BaseMessages behind each of `messages` (several ToolMessages behind one tool message). */
  origin: BaseMessage[][]
  /** Where the newest assistant message is in `messages` (-1: none). */
  newestAi: number
  /** The usage of the newest AIMessage: the last call's, which calibrates the count. */
  usage?: Usage
}

/** What a conversion leaves for the next one of the same thread. */
export interface ConvertState {
  converted: Converted
  /** The request's messages it was made from: their number, first and last. */
  length: number
  first: BaseMessage
  last: BaseMessage
  /** Tool names by call id, for ToolMessages without a name. */
  names: Map<string, string>
}

/**
 * The request's messages as ModelMessages: consecutive ToolMessages grouped into one tool message
 * (LangChain has one per call), a tool result named after its call when the ToolMessage has no name.
 * With `previous` (the thread's last conversion), a request that continues it (the same first
 * message, the same message where it ended, as the session's own sync recognises a history) is
 * converted from there on only.
 */
export function toModelMessages(messages: readonly BaseMessage[], previous?: ConvertState): ConvertState {
  const p = previous
  const continues =
    p !== undefined &&
    messages.length >= p.length &&
    messages[0] === p.first &&
    messages[p.length - 1] === p.last &&
    p.converted.messages.length > 0 &&
    // A ToolMessage right after would join the last tool message: converted afresh.
    !(messages.length > p.length && typeOf(messages[p.length]!) === 'tool' && p.converted.messages[p.converted.messages.length - 1]!.role === 'tool')
  let i = 0
  let system: BaseMessage[]
  let out: ModelMessageLike[]
  let origin: BaseMessage[][]
  let names: Map<string, string>
  let newestAi = -1
  let usage: Usage | undefined
  if (continues) {
    i = p.length
    system = p.converted.system
    out = p.converted.messages.slice()
    origin = p.converted.origin.slice()
    names = p.names
    newestAi = p.converted.newestAi
    usage = p.converted.usage
  } else {
    system = []
    for (; i < messages.length && typeOf(messages[i]!) === 'system'; i++) system.push(messages[i]!)
    out = []
    origin = []
    names = new Map()
  }
  for (; i < messages.length; i++) {
    const m = messages[i]!
    const type = typeOf(m)
    const kept = stashed(m)
    if (type === 'tool') {
      const t = m as ToolMessage
      const part = cached(t, () => ({ type: 'tool-result', toolCallId: t.tool_call_id, toolName: t.name ?? names.get(t.tool_call_id) ?? 'tool', output: toolOutput(t) }))
      const last = out[out.length - 1]
      if (last?.role === 'tool' && Array.isArray(last.content) && origin[origin.length - 1]!.every((o) => typeOf(o) === 'tool')) {
        ;(last.content as unknown[]).push(part)
        origin[origin.length - 1]!.push(m)
      } else {
        out.push({ role: 'tool', content: [part] })
        origin.push([m])
      }
      continue
    }
    if (type === 'ai') {
      const a = m as AIMessage
      for (const c of a.tool_calls ?? []) if (c.id) names.set(c.id, c.name)
      newestAi = out.length
      usage = usageOf(a)
      out.push(kept ?? cached(a, () => assistantMessage(a)))
    } else if (type === 'system') {
      out.push(kept ?? { role: 'system', content: textOfContent(m.content) })
    } else {
      // human, and any other type (a generic ChatMessage) as the user's.
      out.push(kept ?? cached(m, () => ({ role: 'user', content: userContent(m.content) }) as ModelMessageLike))
    }
    origin.push([m])
  }
  const converted: Converted = { system, messages: out, origin, newestAi, ...(usage ? { usage } : {}) }
  return { converted, length: messages.length, first: messages[0]!, last: messages[messages.length - 1]!, names }
}

/** An AIMessage's `usage_metadata` as a contextfold Usage (`input_tokens` includes the cached tokens, as LangChain counts). */
export function usageOf(m: AIMessage): Usage | undefined {
  const u = m.usage_metadata
  if (!u || typeof u.input_tokens !== 'number') return undefined
  const read = u.input_token_details?.cache_read ?? 0
  const write = u.input_token_details?.cache_creation ?? 0
  return usageFromProvider({
    inputTokens: { total: u.input_tokens, noCache: Math.max(0, u.input_tokens - read - write), cacheRead: read, cacheWrite: write },
    outputTokens: { total: u.output_tokens ?? 0, reasoning: u.output_token_details?.reasoning },
  })
}

/** An output part as LangChain tool content. */
function toolContent(output: unknown): ToolMessage['content'] {
  const o = obj(output)
  if (!o) return String(output ?? '')
  if (typeof o.value === 'string') return o.value
  if (o.type === 'content' && Array.isArray(o.value)) {
    return o.value.map((p) => {
      const q = obj(p) ?? {}
      if (q.type === 'text') return { type: 'text', text: String(q.text ?? '') }
      return { type: 'image', data: q.data, mimeType: q.mediaType }
    }) as ToolMessage['content']
  }
  return JSON.stringify(o.value ?? o)
}

/** Session parts as LangChain content blocks (text, thinking with its signature, reasoning). */
function blocksOf(parts: unknown): { content: string | Json[]; calls: { id: string; name: string; args: Json; type: 'tool_call' }[] } {
  if (typeof parts === 'string') return { content: parts, calls: [] }
  const content: Json[] = []
  const calls: { id: string; name: string; args: Json; type: 'tool_call' }[] = []
  for (const p of Array.isArray(parts) ? parts : []) {
    const o = obj(p)
    if (!o) continue
    if (o.type === 'text') content.push({ type: 'text', text: String(o.text ?? '') })
    else if (o.type === 'tool-call') calls.push({ id: String(o.toolCallId), name: String(o.toolName), args: obj(o.input) ?? {}, type: 'tool_call' })
    else if (o.type === 'reasoning') {
      const anthropic = obj(obj(o.providerOptions)?.anthropic)
      if (typeof anthropic?.signature === 'string') content.push({ type: 'thinking', thinking: String(o.text ?? ''), signature: anthropic.signature })
      else if (typeof anthropic?.redactedData === 'string') content.push({ type: 'redacted_thinking', data: anthropic.redactedData })
      else content.push({ type: 'reasoning', reasoning: String(o.text ?? '') })
    } else if (o.type === 'image') content.push({ type: 'image', url: o.image, ...(o.mediaType ? { mimeType: o.mediaType } : {}) })
    else content.push(o)
  }
  return { content, calls }
}

/** A message contextfold made (a summary, its request), with its session form kept for the next sync. */
function made(m: ModelMessageLike): BaseMessage {
  const { content, calls } = blocksOf(m.content)
  const meta = { [STASH]: { message: m, text: textOfContent(content) } }
  if (m.role === 'assistant') return new AIMessage({ content: content as AIMessage['content'], tool_calls: calls, response_metadata: meta })
  if (m.role === 'system') return new SystemMessage({ content: content as SystemMessage['content'], response_metadata: meta })
  return new HumanMessage({ content: content as HumanMessage['content'], response_metadata: meta })
}

/** The tool call ids of a message's parts (`tool-call` or `tool-result`), joined. */
function callIds(m: ModelMessageLike): string {
  if (!Array.isArray(m.content)) return ''
  let out = ''
  for (const p of m.content as Json[]) if (p?.type === 'tool-call' || p?.type === 'tool-result') out += `${String(p.toolCallId)}\n`
  return out
}

/** Whether `out` (the session's) stands for `own` (the request's), as it came or pruned. */
function pairs(out: ModelMessageLike, own: ModelMessageLike): boolean {
  if (out.role !== own.role) return false
  const ids = callIds(own)
  return ids !== '' ? callIds(out) === ids : sameValue(out, own)
}

/** What `fromModelMessages` leaves for the next call of the same thread. */
export interface HandBackState {
  /** The session's messages it was given, and the request's (`converted.messages`). */
  out: readonly ModelMessageLike[]
  own: readonly ModelMessageLike[]
  /** The LangChain messages (after `converted.system`), and where those of each of `out` start. */
  result: BaseMessage[]
  starts: number[]
  /** `i - j` of the pairs (`out[j]` stands for `own[i]`). */
  offset: number
  /** Where the newest AIMessage's pair was in `out` (its messages are the request's as they came). */
  newest: number
}

/** How many leading elements `a` and `b` share (the same objects). */
function shared<T>(a: readonly T[], b: readonly T[]): number {
  const n = Math.min(a.length, b.length)
  let k = 0
  while (k < n && a[k] === b[k]) k++
  return k
}

/**
 * The session's messages as LangChain messages: the request's own object for each message the
 * session left as it came (and always for the newest AIMessage), a ToolMessage with the pruned
 * output for a pruned result, a new message for a summary. `converted` is the request's. The
 * session's messages end with the request's (a compaction puts its summary before them), so they
 * are paired from the end. With `previous` (the thread's last call), the pairs of messages that
 * are the same objects as then are taken from it: a call pays for what changed.
 */
export function fromModelMessages(out: readonly ModelMessageLike[], converted: Converted, previous?: HandBackState): { messages: BaseMessage[]; state: HandBackState } {
  const tail: BaseMessage[] = []
  /** Per `out[j]` from the end: how many of `tail` its messages end at. */
  const ends: number[] = []
  let i = converted.messages.length - 1
  let j = out.length - 1
  const offset = i - j
  const newestAi = converted.origin[converted.newestAi]?.[0]
  let newest = -1
  const p = previous?.offset === offset ? previous : undefined
  // Below this, a pair is what it was in the previous call (the newest AIMessage's pair excepted: it may be older now).
  const reusable = p ? Math.min(shared(out, p.out), shared(converted.messages, p.own) - offset, p.newest < 0 ? p.out.length : p.newest) : 0
  let head: BaseMessage[] | undefined
  for (; j >= 0 && i >= 0; i--, j--) {
    if (j < reusable) {
      head = p!.result.slice(0, p!.starts[j + 1] ?? p!.result.length)
      break
    }
    if (!pairs(out[j]!, converted.messages[i]!)) break
    const m = out[j]!
    const own = converted.messages[i]!
    const from = converted.origin[i]!
    if (from[0] === newestAi) newest = j
    if (sameValue(m, own) || from[0] === newestAi) {
      // As it came; the newest assistant turn always so (thinking blocks and their signatures included).
      for (let k = from.length - 1; k >= 0; k--) tail.push(from[k]!)
    } else if (m.role === 'tool') {
      const parts = m.content as Json[]
      for (let k = parts.length - 1; k >= 0; k--) tail.push(sameValue(parts[k], (own.content as unknown[])[k]) ? from[k]! : prunedResult(parts[k]!, from[k] as ToolMessage))
    } else if (m.role === 'assistant') {
      const a = from[0] as AIMessage
      const { content, calls } = blocksOf(m.content)
      tail.push(new AIMessage({ content: content as AIMessage['content'], tool_calls: calls, ...(a.id ? { id: a.id } : {}), response_metadata: a.response_metadata }))
    } else {
      tail.push(made(m))
    }
    ends.push(tail.length)
  }
  if (!head) {
    head = []
    for (; j >= 0; j--) {
      tail.push(made(out[j]!))
      ends.push(tail.length)
    }
    j = -1
  }
  // `tail` holds out[j + 1..] from the end; their starts follow the head's.
  const starts = j >= 0 ? p!.starts.slice(0, j + 1) : []
  for (let k = ends.length - 1; k >= 0; k--) starts.push(head.length + tail.length - ends[k]!)
  tail.reverse()
  const result = head.concat(tail)
  return { messages: [...converted.system, ...result], state: { out, own: converted.messages, result, starts, offset, newest } }
}

/** A tool result the session pruned, as a ToolMessage in place of `base`. */
function prunedResult(part: Json, base: ToolMessage | undefined): ToolMessage {
  return new ToolMessage({
    content: toolContent(part.output),
    tool_call_id: String(part.toolCallId),
    name: String(part.toolName ?? base?.name ?? 'tool'),
    ...(base?.id ? { id: base.id } : {}),
    ...(base?.status ? { status: base.status } : {}),
  })
}
