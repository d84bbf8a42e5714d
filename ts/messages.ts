// Messages compact() appends after the summary (opencode's auto-continue message, the overflow
// replay), and `unknownPart`, how a part of a type contextfold does not know goes into a message.
import { InvalidArgumentError } from './errors.js'
import type { Message, Session, TextPart, UnknownPart } from './native.js'
import { CONTINUE_TEXT, MEDIA_NOTICE } from './prompt.js'

/** The text of the auto-continue message (after an overflow, the media notice first). */
export function continueText(overflow: boolean): string {
  return (overflow ? `${MEDIA_NOTICE}\n\n` : '') + CONTINUE_TEXT
}

/**
 * opencode's synthetic auto-continue user message; after an overflow, the media notice paragraph
 * comes first. The text part is `synthetic` with `metadata: { compaction_continue: true }`.
 */
export function continueMessage(session: Session, opts: { overflow: boolean; like?: Message }): Message {
  const id = session.newMessageID()
  const text = continueText(opts.overflow)
  // opencode's fields, which the message model keeps without naming them.
  const like = opts.like as (Message & { agent?: unknown }) | undefined
  const part: TextPart & { metadata: Record<string, unknown> } = { type: 'text', id: `${id}_t`, text, synthetic: true, metadata: { compaction_continue: true } }
  const message: Message & { agent?: unknown } = {
    ...(like?.agent !== undefined ? { agent: like.agent } : {}),
    ...(like?.model !== undefined ? { model: like.model } : {}),
    id,
    role: 'user',
    time: { created: Date.now() },
    parts: [part],
  }
  return message
}

/**
 * The rejected user message again, after the summary: its fields (agent, model, system, tools...)
 * and parts with new ids, images and PDFs replaced by `[Attached <mime>: <filename>]` text parts
 * (`Session.replayMessage`).
 */
export function replayMessage(session: Session, original: Message): Message {
  return session.replayMessage(original)
}

/** The part types of the message model (`Part`): any other is an `UnknownPart`. */
const KNOWN_PART_TYPES = new Set(['text', 'reasoning', 'file', 'tool', 'compaction'])

/**
 * `part` as an `UnknownPart`: a part of a type contextfold does not know (opencode's `step-start`,
 * `patch`...), kept as it came and ignored by counting and conversion, as `messages()` returns it.
 * Its `type` is opaque to TypeScript, so that `part.type === 'text'` narrows a `Part`.
 *
 * @throws InvalidArgumentError (`CF_INVALID_ARGUMENT`) for a part without a string `type` and `id`,
 *   or of a type the message model has (write that part as its own type: `TextPart`...).
 */
export function unknownPart(part: { type: string; id?: string; [key: string]: unknown }): UnknownPart {
  if (typeof part !== 'object' || part === null || typeof part.type !== 'string' || (part.id !== undefined && typeof part.id !== 'string')) {
    throw new InvalidArgumentError('unknownPart: a part is an object with a string `type` (and, if it has one, a string `id`)')
  }
  if (KNOWN_PART_TYPES.has(part.type)) {
    throw new InvalidArgumentError(`unknownPart: "${part.type}" is a part type of the message model; write the part as it is (a ${part.type} part), not as an unknown one`)
  }
  return part as unknown as UnknownPart
}
