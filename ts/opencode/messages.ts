// opencode's messages ({ info, parts }) as contextfold messages. opencode's model is contextfold's own
// (a tool part holds the call and its result), so the opencode importer maps them field for field and
// keeps every message and part id: what the engine decides about a part applies to opencode's part.
import type { Hooks } from '@opencode-ai/plugin'
import { importTranscript, type Message } from '../native.js'

/** A message as opencode hands it to plugins: `{ info, parts }`. */
export type OpencodeMessage = Parameters<NonNullable<Hooks['experimental.chat.messages.transform']>>[1]['messages'][number]
/** A part of an opencode message. */
export type OpencodePart = OpencodeMessage['parts'][number]
/** opencode's tool part (call and result). */
export type OpencodeToolPart = Extract<OpencodePart, { type: 'tool' }>

/** The messages as contextfold messages (same ids), through the opencode export importer. */
export function toMessages(messages: readonly OpencodeMessage[]): Message[] {
  return importTranscript({ text: JSON.stringify({ messages }) }, { format: 'opencode' }).messages
}

/** opencode's text part that marks its auto-continue message. */
function isContinue(part: OpencodePart): boolean {
  return part.type === 'text' && part.synthetic === true && (part.metadata as { compaction_continue?: unknown } | undefined)?.compaction_continue === true
}

/** A request the user typed: a user message with non-synthetic text and no compaction part. */
export function isUserRequest(m: OpencodeMessage): boolean {
  if (m.info.role !== 'user' || m.parts.some((p) => p.type === 'compaction')) return false
  return m.parts.some((p) => p.type === 'text' && p.synthetic !== true && !isContinue(p) && p.text.trim() !== '')
}

/** opencode's compaction request: a user message holding a `compaction` part. */
export function isCompactionRequest(m: OpencodeMessage): boolean {
  return m.info.role === 'user' && m.parts.some((p) => p.type === 'compaction')
}
