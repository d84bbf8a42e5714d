// turns / select / splitTurn (DESIGN §6 "tail kept verbatim", opencode §6.3): whole turns from the
// newest back, then the largest fitting suffix of the next turn, never starting the tail on a
// compaction request, a summary or an errored answer.
import { describe, expect, it } from 'vitest'

import { Session, select, splitTurn, turns } from '../native.js'
import type { Message, ModelInfo } from '../native.js'
import { MODEL, assistant, exact, expectCode, ids, msgTokens, request, summary, system, user, words } from './helpers.js'

const T = (m: Message) => msgTokens(m)
const sum = (ms: Message[]) => ms.reduce((n, m) => n + T(m), 0)

describe('turns', () => {
  it('is empty for no messages', () => {
    expect(turns([])).toEqual([])
  })

  it('starts a turn at each user message and ends it before the next', () => {
    const msgs = [user('u1'), assistant('a1'), assistant('a1b'), user('u2'), assistant('a2')]
    expect(turns(msgs)).toEqual([
      { start: 0, end: 3, id: 'u1' },
      { start: 3, end: 5, id: 'u2' },
    ])
  })

  it('leaves messages before the first user message out of every turn', () => {
    const msgs = [system('sys', 'be brief'), assistant('a0'), user('u1'), assistant('a1')]
    expect(turns(msgs)).toEqual([{ start: 2, end: 4, id: 'u1' }])
  })

  it('a compaction request does not start a turn', () => {
    const msgs = [user('u1'), assistant('a1'), request('c1'), summary('s1', 'c1'), user('u2')]
    expect(turns(msgs)).toEqual([
      { start: 0, end: 4, id: 'u1' },
      { start: 4, end: 5, id: 'u2' },
    ])
  })

  it('rejects invalid messages with CF_INVALID_MESSAGE', () => {
    expectCode(() => turns([{ id: 'x', role: 'user' } as never]), 'CF_INVALID_MESSAGE')
  })
})

describe('select', () => {
  const msgs = [
    user('u1', words(100)),
    assistant('a1', words(500)),
    user('u2', words(50)),
    assistant('a2a', words(200)),
    assistant('a2b', words(300)),
    user('u3', words(20)),
    assistant('a3', words(100)),
  ]
  const last = sum(msgs.slice(5))
  const at = (budget: number) => select(msgs, { preserveRecentTokens: budget }, MODEL, 'o200k')

  it('keeps whole turns from the newest back while they fit', () => {
    const budget = last + sum(msgs.slice(2, 5))
    expect(at(budget)).toEqual({ headEnd: 2, tailStartID: 'u2', tailTokens: budget })
    expect(at(budget + T(msgs[0]))).toEqual({ headEnd: 2, tailStartID: 'u2', tailTokens: budget })
  })

  it('then keeps the largest suffix of the next turn that fits', () => {
    expect(at(last + T(msgs[4]))).toEqual({ headEnd: 4, tailStartID: 'a2b', tailTokens: last + T(msgs[4]) })
    expect(at(last + T(msgs[3]) + T(msgs[4]))).toEqual({
      headEnd: 3,
      tailStartID: 'a2a',
      tailTokens: last + T(msgs[3]) + T(msgs[4]),
    })
  })

  it('keeps just the whole turns when no suffix of the next one fits', () => {
    expect(at(last + T(msgs[4]) - 1)).toEqual({ headEnd: 5, tailStartID: 'u3', tailTokens: last })
    expect(at(last)).toEqual({ headEnd: 5, tailStartID: 'u3', tailTokens: last })
  })

  it('splits the newest turn when even it does not fit', () => {
    expect(at(T(msgs[6]))).toEqual({ headEnd: 6, tailStartID: 'a3', tailTokens: T(msgs[6]) })
  })

  it('summarizes everything when nothing fits', () => {
    expect(at(T(msgs[6]) - 1)).toEqual({ headEnd: 7, tailTokens: 0 })
    expect(at(0)).toEqual({ headEnd: 7, tailTokens: 0 })
    expect(at(0).tailStartID).toBeUndefined()
  })

  it('summarizes everything when the whole history would be the tail (nothing left to summarize)', () => {
    // opencode: `if !keep or keep.start == 0: return {head: msgs}`
    expect(at(sum(msgs))).toEqual({ headEnd: 7, tailTokens: 0 })
  })

  it('never starts the tail on an errored answer, a compaction request or a summary', () => {
    const errored = assistant('bad', words(50), { error: { name: 'APIError', message: 'overloaded' } })
    const m1 = [user('u1', words(300)), assistant('a1', words(300)), user('u2', words(300)), errored, assistant('ok', words(40))]
    expect(select(m1, { preserveRecentTokens: T(errored) + T(m1[4]) }, MODEL, 'o200k')).toMatchObject({
      headEnd: 4,
      tailStartID: 'ok',
    })
    const m2 = [user('u1', words(300)), assistant('a1', words(300)), request('c1'), summary('s1', 'c1'), assistant('after', words(10))]
    expect(select(m2, { preserveRecentTokens: sum(m2.slice(2)) }, MODEL, 'o200k')).toMatchObject({
      headEnd: 4,
      tailStartID: 'after',
    })
  })

  it('tailTurns caps the number of whole turns kept', () => {
    const big = 1e9
    expect(select(msgs, { preserveRecentTokens: big, tailTurns: 1 }, MODEL, 'o200k')).toEqual({
      headEnd: 5,
      tailStartID: 'u3',
      tailTokens: last,
    })
    expect(select(msgs, { preserveRecentTokens: big, tailTurns: 2 }, MODEL, 'o200k')).toMatchObject({ headEnd: 2, tailStartID: 'u2' })
    for (const tailTurns of [0, -1]) {
      expect(select(msgs, { preserveRecentTokens: big, tailTurns }, MODEL, 'o200k')).toEqual({ headEnd: 7, tailTokens: 0 })
    }
  })

  describe('default budget: clamp(usable × 0.25, 2000, 15000)', () => {
    // [big head, a 1-word user turn, a user turn of exactly B tokens]: the tail is exactly the last
    // turn iff B ≤ budget < B + T(1-word turn), so the result pins the budget down.
    const layout = (B: number) => {
      const overhead = T(user('x', []))
      return [user('head', words(20_000)), user('prev', words(1)), user('lastTurn', words(B - overhead))]
    }
    const check = (model: ModelInfo | undefined, B: number) => {
      const m = layout(B)
      expect(T(m[2])).toBe(B)
      expect(select(m, {}, model, 'o200k')).toEqual({ headEnd: 2, tailStartID: 'lastTurn', tailTokens: B })
      expect(select(layout(B + 1), {}, model, 'o200k')).toEqual({ headEnd: 3, tailTokens: 0 })
    }

    it('caps at 15000 for a 168000-token usable window', () => check(MODEL, 15_000))
    it('is a quarter of a 20000-token usable window', () => check({ limit: { context: 52_000 } }, 5_000))
    it('is at least 2000 for an 8000-token usable window', () => check({ limit: { context: 40_000 } }, 2_000))
    it('is 2000 with an unknown window', () => check(undefined, 2_000))
    it('an explicit preserveRecentTokens wins', () => {
      const m = layout(3_000)
      expect(select(m, { preserveRecentTokens: 3_000 }, MODEL, 'o200k')).toMatchObject({ headEnd: 2, tailStartID: 'lastTurn' })
      expect(select(m, { preserveRecentTokens: 2_999 }, MODEL, 'o200k')).toMatchObject({ headEnd: 3 })
    })
  })

  it('Session.select uses the session settings and never starts the tail on the request or summary', () => {
    const history = [
      user('u1', words(800)),
      assistant('a1', words(800)),
      user('u2', words(50)),
      assistant('a2', words(50)),
      request('c1', { tailStartID: 'u2' }),
      summary('s1', 'c1', { body: words(400) }),
      user('u3', words(30)),
      assistant('a3', words(30)),
    ]
    const s = Session.fromMessages(history, exact({ preserveRecentTokens: 1e6 }))
    expect(ids(s.context())).toEqual(['c1', 's1', 'u2', 'a2', 'u3', 'a3'])
    // everything after the summary fits, but the tail can start no earlier than u2 (index 2)
    expect(s.select()).toEqual({ headEnd: 2, tailStartID: 'u2', tailTokens: sum(s.context().slice(2)) })
  })

  it('rejects bad settings with CF_INVALID_ARGUMENT', () => {
    expect(expectCode(() => select(msgs, { preserveRecentTokens: 'x' as never }), 'CF_INVALID_ARGUMENT').message).toContain(
      'preserveRecentTokens',
    )
    expectCode(() => select(msgs, {}, { limit: {} } as never), 'CF_INVALID_ARGUMENT')
    expectCode(() => select(msgs, {}, MODEL, 'bpe' as never), 'CF_INVALID_ARGUMENT')
  })
})

describe('splitTurn', () => {
  const msgs = [user('u1', words(10)), assistant('a1', words(100)), assistant('a2', words(50)), assistant('a3', words(20))]
  const turn = { start: 0, end: 4, id: 'u1' }

  it('returns the largest suffix of the turn that fits, after its first message', () => {
    expect(splitTurn(msgs, turn, sum(msgs), 'o200k')).toEqual({ start: 1, id: 'a1' })
    expect(splitTurn(msgs, turn, sum(msgs.slice(1)), 'o200k')).toEqual({ start: 1, id: 'a1' })
    expect(splitTurn(msgs, turn, sum(msgs.slice(1)) - 1, 'o200k')).toEqual({ start: 2, id: 'a2' })
    expect(splitTurn(msgs, turn, sum(msgs.slice(2)), 'o200k')).toEqual({ start: 2, id: 'a2' })
    expect(splitTurn(msgs, turn, T(msgs[3]), 'o200k')).toEqual({ start: 3, id: 'a3' })
  })

  it('returns null when nothing fits, the budget is 0, or the turn has one message', () => {
    expect(splitTurn(msgs, turn, T(msgs[3]) - 1, 'o200k')).toBeNull()
    expect(splitTurn(msgs, turn, 0, 'o200k')).toBeNull()
    expect(splitTurn(msgs, turn, -5, 'o200k')).toBeNull()
    expect(splitTurn(msgs, { start: 0, end: 1, id: 'u1' }, 1e9, 'o200k')).toBeNull()
  })

  it('works on a turn in the middle of the list', () => {
    const more = [...msgs, user('u2', words(5)), assistant('b1', words(5))]
    expect(splitTurn(more, { start: 4, end: 6, id: 'u2' }, 1e9, 'o200k')).toEqual({ start: 5, id: 'b1' })
    expect(splitTurn(more, turn, T(msgs[3]), 'o200k')).toEqual({ start: 3, id: 'a3' })
  })

  it('skips an errored answer as a start', () => {
    const m = [user('u1'), assistant('a1', words(100)), assistant('bad', 'x', { error: { name: 'APIError', message: '' } }), assistant('a3', 'y')]
    expect(splitTurn(m, { start: 0, end: 4, id: 'u1' }, T(m[2]) + T(m[3]), 'o200k')).toEqual({ start: 3, id: 'a3' })
  })

  it('rejects a turn outside the messages with CF_INVALID_ARGUMENT', () => {
    expectCode(() => splitTurn(msgs, { start: 0, end: 9, id: 'u1' }, 10), 'CF_INVALID_ARGUMENT')
    expectCode(() => splitTurn(msgs, { start: 3, end: 3, id: 'u1' }, 10), 'CF_INVALID_ARGUMENT')
    expectCode(() => splitTurn([], { start: 0, end: 1, id: 'u1' }, 10), 'CF_INVALID_ARGUMENT')
  })
})
