// Messages compact() appends after the summary: opencode's auto-continue message and the overflow replay.
import type { FilePart, Message, Part, Session } from '../native.js'
import { CONTINUE_TEXT, MEDIA_NOTICE } from './prompt.js'

/** Images and PDFs: what a replay turns into `[Attached <mime>: <filename>]` (opencode's `isMedia`). */
export function isMedia(mime: string): boolean {
  return mime.startsWith('image/') || mime === 'application/pdf'
}

/** Fields of a user message carried over to the messages compact() writes for it (agent, model, ...). */
const NOT_COPIED = new Set(['id', 'role', 'parts', 'time', 'parentID', 'summary', 'finish', 'error', 'tokens'])

function carried(from: Message | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (!from) return out
  for (const [k, v] of Object.entries(from)) if (!NOT_COPIED.has(k)) out[k] = v
  return out
}

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
 * and parts with new ids, images and PDFs replaced by `[Attached <mime>: <filename>]` text parts.
 */
export function replayMessage(session: Session, original: Message): Message {
  const id = session.newMessageID()
  const parts: Part[] = []
  original.parts.forEach((p, i) => {
    if (p.type === 'compaction') return
    const partID = `${id}_p${i}`
    if (p.type === 'file' && isMedia(String((p as FilePart).mime))) {
      const f = p as FilePart
      parts.push({ type: 'text', id: partID, text: `[Attached ${f.mime}: ${f.filename ?? 'file'}]` })
    } else {
      parts.push({ ...p, id: partID } as Part)
    }
  })
  return { ...carried(original), id, role: 'user', time: { created: Date.now() }, parts }
}
