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
    // The agent goes on working on the same request (steps without a new user message).
    let last: Awaited<ReturnType<AutoCompactor['afterStep']>> | undefined
    for (let t = 0; !last?.compaction; t++) {
      s.append(assistant(`ba${t}`, filler(700, `ba${t}`)))
      last = await auto.afterStep()
    }
    expect(last.compaction!.status).toBe('compacted')
    expect(last.speculative).toBe(true)
    expect(calls.length).toBe(1)
    expect(calls[0]!.plan!.summarizedIDs).toEqual(snapshot)
    // The messages since the snapshot stay verbatim, right after the summary.
    const context = s.context()
    expect(context[2]!.id).toBe('ba0')
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

  it('discards the summary when the user made a new request since the snapshot (it would present the old one as current)', async () => {
    const s = new Session(options())
    const { summarizer, calls } = counting()
    const auto = new AutoCompactor(s, { summarizer, speculateAt: 0.7 })
    await grow(s, auto, 'a', () => s.usage().pressure >= 0.7)
    await new Promise((r) => setTimeout(r, 50))
    expect(calls.length).toBe(1)
    let last: Awaited<ReturnType<AutoCompactor['afterStep']>> | undefined
    for (let t = 0; !last?.compaction; t++) {
      s.append(user(`bu${t}`, `New request ${t}: ${filler(20, `b${t}`)}`))
      s.append(assistant(`ba${t}`, filler(700, `ba${t}`)))
      last = await auto.afterStep()
    }
    expect(last.compaction!.status).toBe('compacted')
    expect(last.speculative).toBeUndefined()
    expect(calls.length).toBe(2)
    // The fresh summary covers the new requests too.
    expect(calls[1]!.plan!.summarizedIDs).toContain('bu0')
  })

  it('discards a speculation that fails or is aborted, and compacts as usual', async () => {
    const s = new Session(options())
    let n = 0
    const summarizer: Summarizer = async () => {
      n++
      if (n === 1) throw new Error('upstream 500')
      return { text: `Summary ${n}.`, finishReason: 'stop' }
    }
    const auto = new AutoCompactor(s, { summarizer, speculateAt: 0.7, fallback: false })
    await grow(s, auto, 'a', () => s.usage().pressure >= 0.7)
    await new Promise((r) => setTimeout(r, 50))
    let last: Awaited<ReturnType<AutoCompactor['afterStep']>> | undefined
    for (let t = 0; !last?.compaction; t++) {
      s.append(assistant(`ba${t}`, filler(700, `ba${t}`)))
      last = await auto.afterStep()
    }
    expect(last.compaction!.status).toBe('compacted')
    expect(last.speculative).toBeUndefined()
    // The failed speculation, then the compaction's own call(s) (a split turn's prefix gets its own).
    expect(n).toBeGreaterThanOrEqual(2)
    // An explicit discard aborts a running speculation.
    const s2 = new Session(options())
    let aborted = false
    const slow: Summarizer = (_req, signal) =>
      new Promise((_resolve, reject) => signal?.addEventListener('abort', () => ((aborted = true), reject(signal.reason))))
    const auto2 = new AutoCompactor(s2, { summarizer: slow, speculateAt: 0.7 })
    await grow(s2, auto2, 'c', () => s2.usage().pressure >= 0.7)
    auto2.discardSpeculation()
    await new Promise((r) => setTimeout(r, 10))
    expect(aborted).toBe(true)
  })
})
