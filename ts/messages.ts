// Messages compact() appends after the summary: opencode's auto-continue message and the overflow replay.
import type { Message, Session } from './native.js'
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
  const like = opts.like
  return {
    ...(like?.agent !== undefined ? { agent: like.agent } : {}),
    ...(like?.model !== undefined ? { model: like.model } : {}),
    id,
    role: 'user',
    time: { created: Date.now() },
    parts: [{ type: 'text', id: `${id}_t`, text, synthetic: true, metadata: { compaction_continue: true } }],
  }
}

/**
 * The rejected user message again, after the summary: its fields (agent, model, system, tools...)
 * and parts with new ids, images and PDFs replaced by `[Attached <mime>: <filename>]` text parts
 * (`Session.replayMessage`).
 */
export function replayMessage(session: Session, original: Message): Message {
  return session.replayMessage(original)
}
