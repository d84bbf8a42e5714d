// filterCompacted / Session.context(): the newest completed summary's request and summary, the
// kept tail, then everything after; a summary counts only if `summary && finish && !error`.
import { describe, expect, it } from 'vitest'

import { Session, filterCompacted } from '../native.js'
import type { Message } from '../native.js'
import { assistant, exact, expectCode, ids, request, sumTokens, summary, user } from './helpers.js'

const base = (): Message[] => [
  user('u1'),
  assistant('a1'),
  user('u2'),
  assistant('a2'),
  user('u3'),
  assistant('a3'),
]

/** filterCompacted and Session.context() must agree; returns the ids. */
function view(msgs: Message[]): string[] {
  const out = filterCompacted(msgs)
  const s = Session.fromMessages(msgs, exact())
  expect(s.context()).toEqual(out)
  // appending one by one reaches the same view
  const inc = new Session(exact())
  for (const m of msgs) inc.append(m)
  expect(inc.context()).toEqual(out)
  return ids(out)
}

describe('filterCompacted', () => {
  it('returns everything, in order, when there is no compaction', () => {
    const msgs = base()
    expect(filterCompacted(msgs)).toEqual(msgs)
    expect(filterCompacted([])).toEqual([])
  })

  it('without tailStartID: the request, the summary, then later messages', () => {
    const msgs = [...base(), request('c1'), summary('s1', 'c1'), user('u4'), assistant('a4')]
    expect(view(msgs)).toEqual(['c1', 's1', 'u4', 'a4'])
  })

  it('with tailStartID: request, summary, the kept tail, then later messages', () => {
    const msgs = [...base(), request('c1', { tailStartID: 'u3' }), summary('s1', 'c1'), user('u4'), assistant('a4')]
    expect(view(msgs)).toEqual(['c1', 's1', 'u3', 'a3', 'u4', 'a4'])
  })

  it('returns the messages unchanged (not just their ids) and leaves its input alone', () => {
    const msgs = [...base(), request('c1', { tailStartID: 'u3' }), summary('s1', 'c1'), user('u4')]
    const copy = structuredClone(msgs)
    const out = filterCompacted(msgs)
    expect(msgs).toEqual(copy)
    expect(out).toEqual([msgs[6], msgs[7], msgs[4], msgs[5], msgs[8]])
  })

  it('with hiddenFromID: what comes before the hidden range stays first', () => {
    const msgs = [...base(), request('c1', { hiddenFromID: 'u2', tailStartID: 'u3' }), summary('s1', 'c1'), user('u4')]
    expect(view(msgs)).toEqual(['u1', 'a1', 'c1', 's1', 'u3', 'a3', 'u4'])
    const noTail = [...base(), request('c1', { hiddenFromID: 'u2' }), summary('s1', 'c1'), user('u4')]
    expect(view(noTail)).toEqual(['u1', 'a1', 'c1', 's1', 'u4'])
  })

  it('a partial compaction (hiddenFromID) keeps the head as the earlier compaction left it', () => {
    const msgs = [
      user('u1'),
      user('u2'),
      request('r1', { tailStartID: 'u2' }),
      summary('s1', 'r1'),
      user('u3'),
      assistant('a3'),
      request('r2', { hiddenFromID: 'u3' }),
      summary('s2', 'r2'),
      user('u4'),
    ]
    // the head [u1 … s1] reads as r1 left it: r1, s1, u2
    expect(view(msgs)).toEqual(['r1', 's1', 'u2', 'r2', 's2', 'u4'])
    const s = Session.fromMessages(msgs, exact())
    expect(s.usage().tokens).toBe(sumTokens(s.context()))
  })

  it('a tail id that is unknown, or not before the request, keeps no tail', () => {
    expect(view([...base(), request('c1', { tailStartID: 'ghost' }), summary('s1', 'c1'), user('u4')])).toEqual(['c1', 's1', 'u4'])
    expect(view([...base(), request('c1', { tailStartID: 'c1' }), summary('s1', 'c1'), user('u4')])).toEqual(['c1', 's1', 'u4'])
    expect(view([...base(), request('c1', { tailStartID: 'u4' }), summary('s1', 'c1'), user('u4')])).toEqual(['c1', 's1', 'u4'])
  })

  describe('a summary counts only if summary && finish && !error', () => {
    const withSummary = (s: Message) => [...base(), request('c1', { tailStartID: 'u3' }), s, user('u4')]
    const all = ['u1', 'a1', 'u2', 'a2', 'u3', 'a3', 'c1', 's1', 'u4']

    it('an errored summary hides nothing', () => {
      expect(view(withSummary(summary('s1', 'c1', { error: { name: 'APIError', message: 'overloaded' } })))).toEqual(all)
    })

    it('an unfinished summary hides nothing', () => {
      expect(view(withSummary(summary('s1', 'c1', { finish: null })))).toEqual(all)
    })

    it('an empty finish is not finished', () => {
      expect(view(withSummary(summary('s1', 'c1', { finish: '' })))).toEqual(all)
    })

    it('summary: false is not a summary', () => {
      expect(view(withSummary({ ...summary('s1', 'c1'), summary: false }))).toEqual(all)
    })

    it('a summary by a user message is not a summary', () => {
      expect(view(withSummary({ ...summary('s1', 'c1'), role: 'user' }))).toEqual(all)
    })

    it('a summary whose parent is not a compaction request hides nothing', () => {
      expect(view([...base(), summary('s1', 'u3'), user('u4')])).toEqual(['u1', 'a1', 'u2', 'a2', 'u3', 'a3', 's1', 'u4'])
    })

    it('a request without any summary hides nothing', () => {
      expect(view([...base(), request('c1', { tailStartID: 'u3' })])).toEqual(['u1', 'a1', 'u2', 'a2', 'u3', 'a3', 'c1'])
    })
  })

  it('a failed retry is shown between the request and the completed summary', () => {
    const msgs = [
      ...base(),
      request('c1', { tailStartID: 'u3' }),
      summary('s0', 'c1', { error: { name: 'APIError', message: 'x' } }),
      summary('s1', 'c1'),
      user('u4'),
    ]
    expect(view(msgs)).toEqual(['c1', 's0', 's1', 'u3', 'a3', 'u4'])
  })

  describe('several compactions', () => {
    it('the newest completed one decides', () => {
      const msgs = [
        ...base(),
        request('c1', { tailStartID: 'u3' }),
        summary('s1', 'c1'),
        user('u4'),
        assistant('a4'),
        user('u5'),
        assistant('a5'),
        request('c2', { tailStartID: 'u5' }),
        summary('s2', 'c2'),
        user('u6'),
      ]
      expect(view(msgs)).toEqual(['c2', 's2', 'u5', 'a5', 'u6'])
    })

    it('a failed newer summary does not shadow the earlier completed one', () => {
      const msgs = [
        ...base(),
        request('c1', { tailStartID: 'u3' }),
        summary('s1', 'c1'),
        user('u4'),
        request('c2', { tailStartID: 'u4' }),
        summary('s2', 'c2', { error: { name: 'APIError', message: 'x' } }),
        user('u5'),
      ]
      expect(view(msgs)).toEqual(['c1', 's1', 'u3', 'a3', 'u4', 'c2', 's2', 'u5'])
    })

    it('an earlier request and summary inside the new tail are left out (the new summary covers them)', () => {
      const msgs = [
        ...base(),
        request('c1', { tailStartID: 'u3' }),
        summary('s1', 'c1'),
        user('u4'),
        assistant('a4'),
        request('c2', { tailStartID: 'a3' }),
        summary('s2', 'c2'),
        user('u5'),
      ]
      expect(view(msgs)).toEqual(['c2', 's2', 'a3', 'u4', 'a4', 'u5'])
    })
  })

  it('the first completed summary after its request is the summary', () => {
    const msgs = [...base(), request('c1'), summary('s1', 'c1'), user('u4'), summary('s1b', 'c1', { body: 'again' })]
    expect(view(msgs)).toEqual(['c1', 's1', 'u4', 's1b'])
  })

  it('rejects invalid messages and duplicate ids', () => {
    expectCode(() => filterCompacted([{ id: 'x', role: 'user', parts: [{ type: 'file', id: 'f', mime: 'text/plain' }] } as never]), 'CF_INVALID_MESSAGE')
    expectCode(() => filterCompacted([user('u1'), user('u1')]), 'CF_DUPLICATE_ID')
  })
})
