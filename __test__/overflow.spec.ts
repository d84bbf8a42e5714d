// usable / isOverflow (DESIGN §6, opencode rules) and the session's pressure tiers.
import { describe, expect, it } from 'vitest'

import { Session, isOverflow, usable } from '../native.js'
import type { ModelInfo } from '../native.js'
import { answered, expectCode, exact, user } from './helpers.js'

const m = (context: number, input?: number, output?: number): ModelInfo => {
  const limit: ModelInfo['limit'] = { context }
  if (input !== undefined) limit.input = input
  if (output !== undefined) limit.output = output
  return { limit }
}

describe('usable', () => {
  // usable = limit.input ? input − reserved : context − maxOutput
  // reserved = min(20000, maxOutput); maxOutput = min(limit.output, 32000) or 32000
  it.each([
    ['200k window, 64k output: 200000 − 32000', m(200_000, undefined, 64_000), 168_000],
    ['200k window, 8k output: 200000 − 8000', m(200_000, undefined, 8_000), 192_000],
    ['200k window, no output limit: 200000 − 32000', m(200_000), 168_000],
    ['output limit 0 means the 32000 cap', m(200_000, undefined, 0), 168_000],
    ['input limit, 128k output: 272000 − min(20000, 32000)', m(400_000, 272_000, 128_000), 252_000],
    ['input limit, 8k output: 272000 − min(20000, 8000)', m(400_000, 272_000, 8_000), 264_000],
    ['input limit, no output: 272000 − 20000', m(400_000, 272_000), 252_000],
    ['unknown window (context 0) is 0', m(0), 0],
    ['context 0 is 0 even with an input limit', m(0, 100_000, 8_000), 0],
    ['floored at 0 without input limit', m(10_000), 0],
    ['floored at 0 with input limit', m(50_000, 10_000, 64_000), 0],
  ])('%s', (_name, model, expected) => {
    expect(usable({ model })).toBe(expected)
  })

  it('an explicit reserved replaces min(20000, maxOutput) when the model has an input limit', () => {
    expect(usable({ model: m(400_000, 272_000, 128_000), cfg: { reserved: 50_000 } })).toBe(222_000)
    expect(usable({ model: m(400_000, 272_000, 128_000), cfg: { reserved: 0 } })).toBe(272_000)
  })

  it('without an input limit, reserved only matters when it is larger than the output cap', () => {
    // opencode ignores reserved here (issue #38835); contextfold keeps max(maxOutput, reserved) free.
    expect(usable({ model: m(200_000, undefined, 8_000), cfg: { reserved: 1_000 } })).toBe(192_000)
    expect(usable({ model: m(200_000, undefined, 8_000), cfg: { reserved: 50_000 } })).toBe(150_000)
  })

  it('rejects bad arguments with CF_INVALID_ARGUMENT naming the field', () => {
    expect(expectCode(() => usable({ model: m(-1) }), 'CF_INVALID_ARGUMENT').message).toContain('context')
    expect(expectCode(() => usable({} as never), 'CF_INVALID_ARGUMENT').message).toContain('model')
    expect(expectCode(() => usable({ model: { limit: {} } } as never), 'CF_INVALID_ARGUMENT').message).toContain('context')
    expect(
      expectCode(() => usable({ model: m(200_000), cfg: { reserved: -5 } }), 'CF_INVALID_ARGUMENT').message,
    ).toContain('reserved')
    expect(expectCode(() => usable({ model: m('big' as never) }), 'CF_INVALID_ARGUMENT').message).toContain('context')
  })

  it('rejects NaN and Infinity limits with CF_INVALID_ARGUMENT', () => {
    expectCode(() => usable({ model: m(Number.NaN) }), 'CF_INVALID_ARGUMENT')
    expectCode(() => usable({ model: m(Number.POSITIVE_INFINITY) }), 'CF_INVALID_ARGUMENT')
  })
})

describe('isOverflow', () => {
  const model = m(200_000, undefined, 64_000) // usable 168000

  it('is true from usable on (tokens ≥ usable)', () => {
    expect(isOverflow({ tokens: 0, model })).toBe(false)
    expect(isOverflow({ tokens: 167_999, model })).toBe(false)
    expect(isOverflow({ tokens: 168_000, model })).toBe(true)
    expect(isOverflow({ tokens: 1_000_000, model })).toBe(true)
  })

  it('reads a provider Usage as total, else input + output + cacheRead + cacheWrite', () => {
    expect(isOverflow({ tokens: { input: 100_000, output: 67_999 }, model })).toBe(false)
    expect(isOverflow({ tokens: { input: 100_000, output: 68_000 }, model })).toBe(true)
    expect(isOverflow({ tokens: { input: 100_000, output: 60_000, cacheRead: 7_999 }, model })).toBe(false)
    expect(isOverflow({ tokens: { input: 100_000, output: 60_000, cacheRead: 7_000, cacheWrite: 1_000 }, model })).toBe(true)
    // total wins when set …
    expect(isOverflow({ tokens: { input: 1, output: 1, total: 168_000 }, model })).toBe(true)
    expect(isOverflow({ tokens: { input: 150_000, output: 30_000, total: 1_000 }, model })).toBe(false)
    // … and a zero total falls back to the sum (opencode: `t.total || sum`).
    expect(isOverflow({ tokens: { input: 150_000, output: 30_000, total: 0 }, model })).toBe(true)
    // reasoning is part of output already: it is not added again.
    expect(isOverflow({ tokens: { input: 100_000, output: 60_000, reasoning: 50_000 }, model })).toBe(false)
  })

  it('is never true with auto: false', () => {
    expect(isOverflow({ tokens: 10_000_000, model, cfg: { auto: false } })).toBe(false)
    expect(isOverflow({ tokens: 10_000_000, model, cfg: { auto: true } })).toBe(true)
  })

  it('is never true with an unknown window (context 0)', () => {
    expect(isOverflow({ tokens: 10_000_000, model: m(0) })).toBe(false)
    expect(isOverflow({ tokens: 10_000_000, model: m(0, 1_000) })).toBe(false)
  })

  it('uses the configured reserved', () => {
    const withInput = m(400_000, 272_000, 128_000)
    expect(isOverflow({ tokens: 230_000, model: withInput })).toBe(false)
    expect(isOverflow({ tokens: 230_000, model: withInput, cfg: { reserved: 50_000 } })).toBe(true)
  })

  it('rejects bad arguments with CF_INVALID_ARGUMENT', () => {
    expectCode(() => isOverflow({ tokens: -1, model }), 'CF_INVALID_ARGUMENT')
    expectCode(() => isOverflow({ tokens: 'many' as never, model }), 'CF_INVALID_ARGUMENT')
    expectCode(() => isOverflow({ tokens: { input: -1, output: 0 }, model }), 'CF_INVALID_ARGUMENT')
    expectCode(() => isOverflow({ tokens: 5 } as never), 'CF_INVALID_ARGUMENT')
    expectCode(() => isOverflow({ tokens: 5, model, cfg: { pruneProtect: -1 } }), 'CF_INVALID_ARGUMENT')
  })

  it('rejects a NaN token count with CF_INVALID_ARGUMENT', () => {
    expectCode(() => isOverflow({ tokens: Number.NaN, model }), 'CF_INVALID_ARGUMENT')
  })
})

describe('Session usage pressure and overflow', () => {
  // input 1000 with reserved 0: usable is exactly 1000, so pressure = tokens / 1000.
  const model = m(1_000_000, 1_000)
  const session = (tokens: number, cfg: Record<string, unknown> = {}) => {
    const s = new Session(exact({ reserved: 0, ...cfg }, model))
    s.append(user('u1', 'hi'))
    s.append(answered('a1', { input: tokens, output: 0 }))
    return s
  }

  it.each([
    [0, 'ok'],
    [749, 'ok'],
    [750, 'notice'],
    [849, 'notice'],
    [850, 'prune'],
    [999, 'prune'],
    [1_000, 'compact'],
    [5_000, 'compact'],
  ] as const)('%d of 1000 usable tokens is tier %s', (tokens, tier) => {
    const s = session(tokens)
    const u = s.usage()
    expect(u.usable).toBe(1_000)
    if (tokens > 0) {
      expect(u.source).toBe('usage')
      expect(u.tokens).toBe(tokens)
      expect(u.pressure).toBeCloseTo(tokens / 1_000, 12)
    }
    expect(u.tier).toBe(tier)
    expect(s.isOverflow()).toBe(tokens >= 1_000)
  })

  it('usable matches the stateless usable() for the same options', () => {
    for (const [model, cfg] of [
      [m(200_000, undefined, 64_000), {}],
      [m(400_000, 272_000, 128_000), { reserved: 50_000 }],
      [m(0), {}],
    ] as const) {
      const s = new Session(exact(cfg, model))
      expect(s.usage().usable).toBe(usable({ model, cfg }))
    }
  })

  it('never overflows with auto: false, even far past the window', () => {
    const s = session(5_000, { auto: false })
    expect(s.usage().tokens).toBe(5_000)
    expect(s.isOverflow()).toBe(false)
  })

  it('never overflows with an unknown window; pressure is 0 there', () => {
    const s = new Session(exact({}, m(0)))
    s.append(user('u1', 'hi'))
    s.append(answered('a1', { input: 10_000_000, output: 0 }))
    const u = s.usage()
    expect(u.usable).toBe(0)
    expect(u.pressure).toBe(0)
    expect(u.tier).toBe('ok')
    expect(s.isOverflow()).toBe(false)
  })

  it('overflow follows local counts when there is no provider usage', () => {
    // usable 50: a user message of 60 tokens overflows, one of 10 does not.
    const small = new Session(exact({ reserved: 0 }, m(1_000_000, 50)))
    small.append(user('u1', ' hello'.repeat(10)))
    expect(small.usage().source).toBe('estimate')
    expect(small.isOverflow()).toBe(false)
    small.append(user('u2', ' hello'.repeat(60)))
    expect(small.isOverflow()).toBe(true)
    expect(small.usage().tier).toBe('compact')
  })
})
