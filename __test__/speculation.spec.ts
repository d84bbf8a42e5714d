// AutoCompactor's speculative compaction: a snapshot summarized in the background at `speculateAt`,
// recorded at overflow when the session still starts with it, discarded when it does not.
import { describe, expect, it } from 'vitest'

import { AutoCompactor, Session } from '../dist/index.js'
import type { Summarizer, SummaryRequest } from '../dist/index.js'
import { assistant, filler, options, user } from './compact-fixtures.js'

function counting(): { summarizer: Summarizer; calls: SummaryRequest[] } {
  const calls: SummaryRequest[] = []
  return { calls, summarizer: async (req) => (calls.push(req), { text: `Summary ${calls.length}.`, finishReason: 'stop' }) }
}

/** Appends turns of about 1,000 tokens until `until` says stop, calling `afterStep` after each. */
async function grow(s: Session, auto: AutoCompactor, prefix: string, until: () => boolean) {
  for (let t = 0; !until(); t++) {
    s.append(user(`${prefix}u${t}`, `Request ${prefix}${t}: ${filler(20, `${prefix}${t}`)}`))
    s.append(assistant(`${prefix}a${t}`, filler(700, `${prefix}a${t}`)))
    await auto.afterStep()
  }
}

describe('speculateAt', () => {
  it('summarizes in the background and records that summary at overflow without calling the summarizer again', async () => {
    const s = new Session(options())
    const { summarizer, calls } = counting()
    const auto = new AutoCompactor(s, { summarizer, speculateAt: 0.7 })
    const started: number[] = []
    auto.on('speculating', (e) => started.push(e.messages))
    await grow(s, auto, 'a', () => s.usage().pressure >= 0.7)
    expect(started.length).toBe(1)
    const snapshot = s.context().map((m) => m.id)
    await new Promise((r) => setTimeout(r, 50))
    expect(calls.length).toBe(1)
    let last: Awaited<ReturnType<AutoCompactor['afterStep']>> | undefined
    for (let t = 0; !last?.compaction; t++) {
      s.append(user(`bu${t}`, `More ${t}: ${filler(20, `b${t}`)}`))
      s.append(assistant(`ba${t}`, filler(700, `ba${t}`)))
      last = await auto.afterStep()
    }
    expect(last.compaction!.status).toBe('compacted')
    expect(last.speculative).toBe(true)
    expect(calls.length).toBe(1)
    expect(calls[0]!.plan!.summarizedIDs).toEqual(snapshot)
    // The messages since the snapshot stay verbatim, right after the summary.
    const context = s.context()
    expect(context[2]!.id).toBe('bu0')
    expect(context[1]!.summary).toBe(true)
    expect(s.isOverflow()).toBe(false)
  })

  it('discards the summary when the snapshot is no longer a prefix of the session', async () => {
    const s = new Session(options())
    const { summarizer, calls } = counting()
    const auto = new AutoCompactor(s, { summarizer, speculateAt: 0.7 })
    await grow(s, auto, 'a', () => s.usage().pressure >= 0.7)
    await new Promise((r) => setTimeout(r, 50))
    s.update(user('au0', 'Request a0, edited by the user.'))
    let last: Awaited<ReturnType<AutoCompactor['afterStep']>> | undefined
    for (let t = 0; !last?.compaction; t++) {
      s.append(user(`bu${t}`, `More ${t}`))
      s.append(assistant(`ba${t}`, filler(700, `ba${t}`)))
      last = await auto.afterStep()
    }
    expect(last.compaction!.status).toBe('compacted')
    expect(last.speculative).toBeUndefined()
    expect(calls.length).toBe(2)
  })
})
