// prune (DESIGN §6, opencode's SessionCompaction.prune): keep the last 2 user turns, protect `skill`,
// walk back, stop at a summary or an already-pruned part, keep the newest pruneProtect tokens of
// tool output, prune only if more than pruneMinimum would be freed, mark compactedAt.
import { describe, expect, it } from 'vitest'

import { Session, countTokens, prune, toModelMessages } from '../native.js'
import type { CompactionConfig, Message, ToolPart } from '../native.js'
import {
  PRUNED,
  answered,
  assistant,
  completed,
  exact,
  failedTool,
  msgTokens,
  pending,
  request,
  summary,
  tool,
  user,
  words,
} from './helpers.js'

/** u_i then a_i holding one tool part (id t_i) with an output of `sizes[i]` tokens. */
function turnsWithOutputs(sizes: number[], toolName: (i: number) => string = () => 'bash'): Message[] {
  const out: Message[] = []
  sizes.forEach((n, k) => {
    const i = k + 1
    out.push(user(`u${i}`, `step ${i}`))
    out.push(assistant(`a${i}`, [tool(`call${i}`, toolName(i), completed(words(n), { step: i }), `t${i}`)], { finish: 'tool-calls' }))
  })
  return out
}

const sorted = (xs: string[]) => [...xs].sort()

function toolOutputOf(s: Session, messageID: string, partID: string) {
  const part = s.get(messageID)!.parts.find((p) => p.id === partID) as ToolPart
  return part.state as { status: string; output: string; compactedAt?: number }
}

describe('Session.prune with the defaults (protect 40000, minimum 20000)', () => {
  it('clears the output that lies past the newest 40000 tokens before the last two user turns', () => {
    // a3 and a4 sit in the last two turns; a2 (30000) is within the protected 40000; a1 is past it.
    const s = Session.fromMessages(turnsWithOutputs([30_000, 30_000, 30_000, 30_000]), exact())
    const before = s.usage().tokens
    const t0 = Date.now()
    const r = s.prune()
    const t1 = Date.now()
    expect(r.prunedPartIDs).toEqual(['t1'])
    expect(r.messageIDs).toEqual(['a1'])
    expect(r.compactedAt).toBeGreaterThanOrEqual(t0)
    expect(r.compactedAt).toBeLessThanOrEqual(t1 + 1)
    // the context shrank by what was freed: the 30000-token output became a short marker
    expect(before - s.usage().tokens).toBe(r.tokensFreed)
    expect(r.tokensFreed).toBeGreaterThan(30_000 - 20)
    expect(r.tokensFreed).toBeLessThanOrEqual(30_000)
  })

  it('marks compactedAt on the pruned part and keeps its output stored', () => {
    const s = Session.fromMessages(turnsWithOutputs([30_000, 30_000, 30_000, 30_000]), exact())
    const r = s.prune()
    const t1 = toolOutputOf(s, 'a1', 't1')
    expect(t1.compactedAt).toBe(r.compactedAt)
    expect(t1.output).toBe(words(30_000))
    expect(t1.status).toBe('completed')
    for (const [m, p] of [['a2', 't2'], ['a3', 't3'], ['a4', 't4']]) {
      expect(toolOutputOf(s, m, p).compactedAt).toBeUndefined()
    }
  })

  it('the pruned output then reads as "[Old tool result content cleared]" in toModelMessages', () => {
    const s = Session.fromMessages(turnsWithOutputs([30_000, 30_000, 30_000, 30_000]), exact())
    s.prune()
    const results = s
      .toModelMessages()
      .filter((m) => m.role === 'tool')
      .flatMap((m) => m.content)
    expect(results.map((r) => r.toolCallId)).toEqual(['call1', 'call2', 'call3', 'call4'])
    expect(results[0].output).toEqual({ type: 'text', value: PRUNED })
    for (const r of results.slice(1)) expect(r.output).toEqual({ type: 'text', value: words(30_000) })
  })

  it('is idempotent: a second prune frees nothing and changes nothing', () => {
    const s = Session.fromMessages(turnsWithOutputs([30_000, 30_000, 30_000, 30_000]), exact())
    expect(s.prune().prunedPartIDs).toHaveLength(1)
    const messages = s.messages()
    const usage = s.usage()
    const again = s.prune()
    expect(again.prunedPartIDs).toEqual([])
    expect(again.messageIDs).toEqual([])
    expect(again.tokensFreed).toBe(0)
    expect(s.messages()).toEqual(messages)
    expect(s.usage()).toEqual(usage)
  })

  it('prunes nothing when it would free no more than 20000 tokens', () => {
    // a1 (15000) lies past the protected 40000 but freeing 15000 is not worth it.
    const s = Session.fromMessages(turnsWithOutputs([15_000, 30_000, 30_000, 30_000]), exact())
    const before = s.messages()
    const r = s.prune()
    expect(r).toMatchObject({ prunedPartIDs: [], messageIDs: [], tokensFreed: 0 })
    expect(s.messages()).toEqual(before)
  })

  it('never touches the last two user turns, however big', () => {
    const s = Session.fromMessages(turnsWithOutputs([100_000, 100_000]), exact())
    expect(s.prune().prunedPartIDs).toEqual([])
  })

  it('`compaction.prune: false` (the auto-compactor switch) does not disable an explicit prune()', () => {
    const s = Session.fromMessages(turnsWithOutputs([30_000, 30_000, 30_000, 30_000]), exact({ prune: false }))
    expect(s.prune().prunedPartIDs).toEqual(['t1'])
  })
})

describe('prune thresholds (exact, with small settings)', () => {
  const cfg = (c: CompactionConfig): CompactionConfig => ({ ...c })

  it('protects exactly pruneProtect tokens: a part is cleared once the running total exceeds it', () => {
    // walking back: t2 brings the total to 100 (not > 100), t1 to 120 (> 100): only t1 is a victim.
    const at = prune(turnsWithOutputs([20, 100, 5, 5]), cfg({ pruneProtect: 100, pruneMinimum: 0 }), 'o200k')
    expect(at.prunedPartIDs).toEqual(['t1'])
    const over = prune(turnsWithOutputs([20, 101, 5, 5]), cfg({ pruneProtect: 100, pruneMinimum: 0 }), 'o200k')
    expect(sorted(over.prunedPartIDs)).toEqual(['t1', 't2'])
    expect(over.prunedPartIDs.length).toBe(over.messageIDs.length)
    expect(over.messageIDs[over.prunedPartIDs.indexOf('t2')]).toBe('a2')
  })

  it('prunes only when strictly more than pruneMinimum tokens would be freed, net of the marker left in place', () => {
    const c = cfg({ pruneProtect: 100, pruneMinimum: 50 })
    const marker = countTokens(PRUNED, 'o200k')
    // t2 is protected (100), t1 is past it: clearing it frees its tokens less the marker's.
    expect(prune(turnsWithOutputs([50 + marker, 100, 5, 5]), c, 'o200k').prunedPartIDs).toEqual([])
    const over = prune(turnsWithOutputs([51 + marker, 100, 5, 5]), c, 'o200k')
    expect(over.prunedPartIDs).toEqual(['t1'])
    expect(over.tokensFreed).toBe(51)
    // An output no larger than the marker frees nothing: never cleared, even with no minimum.
    const tiny = prune(turnsWithOutputs([marker, 100, 5, 5]), cfg({ pruneProtect: 100, pruneMinimum: 0 }), 'o200k')
    expect(tiny.prunedPartIDs).toEqual([])
  })

  it('keeps the last two user turns even with no protection at all', () => {
    const r = prune(turnsWithOutputs([10, 10, 10]), cfg({ pruneProtect: 0, pruneMinimum: 0 }), 'o200k')
    expect(r.prunedPartIDs).toEqual(['t1'])
    // several answers in one turn all belong to it
    const msgs = [
      ...turnsWithOutputs([10]),
      user('u2'),
      assistant('a2x', [tool('cx', 'bash', completed(words(10)), 'tx')]),
      assistant('a2y', [tool('cy', 'bash', completed(words(10)), 'ty')]),
      user('u3'),
      assistant('a3', [tool('cz', 'bash', completed(words(10)), 'tz')]),
    ]
    expect(prune(msgs, cfg({ pruneProtect: 0, pruneMinimum: 0 }), 'o200k').prunedPartIDs).toEqual(['t1'])
  })

  it('never prunes `skill` output and does not count it towards the protected total', () => {
    const msgs = [
      user('u1'),
      assistant('a1', [tool('c1', 'bash', completed(words(50)), 'bash1')]),
      user('u2'),
      assistant('a2', [tool('c2', 'skill', completed(words(1_000)), 'skill1')]),
      user('u3'),
      user('u4'),
    ]
    // if skill counted, the total would pass 100 at bash1 and bash1 would be cleared
    expect(prune(msgs, { pruneProtect: 100, pruneMinimum: 0 }, 'o200k').prunedPartIDs).toEqual([])
    expect(prune(msgs, { pruneProtect: 0, pruneMinimum: 0 }, 'o200k').prunedPartIDs).toEqual(['bash1'])
  })

  it('protectedTools replaces the default list', () => {
    const msgs = [
      user('u1'),
      assistant('a1', [tool('c1', 'skill', completed(words(50)), 'skill1'), tool('c2', 'read', completed(words(50)), 'read1')]),
      user('u2'),
      user('u3'),
    ]
    expect(prune(msgs, { pruneProtect: 0, pruneMinimum: 0, protectedTools: ['read'] }, 'o200k').prunedPartIDs).toEqual(['skill1'])
    expect(sorted(prune(msgs, { pruneProtect: 0, pruneMinimum: 0, protectedTools: [] }, 'o200k').prunedPartIDs)).toEqual([
      'read1',
      'skill1',
    ])
  })

  it('only clears completed outputs (errors and unfinished calls have none)', () => {
    const msgs = [
      user('u1'),
      assistant('a1', [
        tool('c1', 'bash', failedTool(words(500)), 'err1'),
        tool('c2', 'bash', pending({ cmd: words(500) }), 'pend1'),
        tool('c3', 'bash', completed(words(30)), 'ok1'),
      ]),
      user('u2'),
      user('u3'),
    ]
    expect(prune(msgs, { pruneProtect: 0, pruneMinimum: 0 }, 'o200k').prunedPartIDs).toEqual(['ok1'])
  })

  it('stops at a summary: nothing before it is pruned', () => {
    const msgs = [
      ...turnsWithOutputs([10]),
      request('c1'),
      summary('s1', 'c1'),
      user('u2'),
      assistant('a2', [tool('call2', 'bash', completed(words(10)), 't2')]),
      user('u3'),
      user('u4'),
    ]
    const r = prune(msgs, { pruneProtect: 0, pruneMinimum: 0 }, 'o200k')
    expect(r.prunedPartIDs).toEqual(['t2'])
    const s = Session.fromMessages(msgs, exact({ pruneProtect: 0, pruneMinimum: 0 }))
    expect(s.prune().prunedPartIDs).toEqual(['t2'])
  })

  it('stops at an already-pruned part: older outputs stay', () => {
    const msgs = turnsWithOutputs([10, 10, 10, 10])
    const a2 = msgs[3].parts[0] as ToolPart
    ;(a2.state as { compactedAt?: number }).compactedAt = 1_700_000_000_000
    expect(prune(msgs, { pruneProtect: 0, pruneMinimum: 0 }, 'o200k').prunedPartIDs).toEqual([])
  })

  it('a later prune clears what became old, then stops at the earlier boundary', () => {
    const s = Session.fromMessages(turnsWithOutputs([10, 10, 10]), exact({ pruneProtect: 0, pruneMinimum: 0 }))
    expect(s.prune().prunedPartIDs).toEqual(['t1'])
    expect(s.prune().prunedPartIDs).toEqual([])
    s.append(user('u4'))
    s.append(assistant('a4', [tool('call4', 'bash', completed(words(10)), 't4')]))
    expect(s.prune().prunedPartIDs).toEqual(['t2'])
    expect(s.prune().prunedPartIDs).toEqual([])
  })
})

describe('stateless prune', () => {
  it('reports what Session.prune clears, without touching its input', () => {
    const msgs = turnsWithOutputs([30_000, 30_000, 30_000, 30_000])
    const copy = structuredClone(msgs)
    const r = prune(msgs, undefined, 'o200k')
    expect(msgs).toEqual(copy)
    expect(r.prunedPartIDs).toEqual(['t1'])
    expect(r.messageIDs).toEqual(['a1'])
    const s = Session.fromMessages(msgs, exact())
    const sr = s.prune()
    expect(sr.prunedPartIDs).toEqual(r.prunedPartIDs)
    expect(sr.tokensFreed).toBe(r.tokensFreed)
  })

  it('defaults to the estimate tokenizer and the default thresholds', () => {
    const msgs = turnsWithOutputs([30_000, 30_000, 30_000, 30_000])
    expect(prune(msgs).prunedPartIDs).toEqual(['t1'])
    expect(prune(msgs, {}).prunedPartIDs).toEqual(['t1'])
  })

  it('after the caller applies compactedAt, a second prune clears nothing and the output reads as cleared', () => {
    const msgs = turnsWithOutputs([10, 10, 10])
    const r = prune(msgs, { pruneProtect: 0, pruneMinimum: 0 }, 'o200k')
    expect(r.prunedPartIDs).toEqual(['t1'])
    for (const [i, partID] of r.prunedPartIDs.entries()) {
      const m = msgs.find((x) => x.id === r.messageIDs[i])!
      const p = m.parts.find((x) => x.id === partID) as ToolPart
      ;(p.state as { compactedAt?: number }).compactedAt = r.compactedAt
    }
    expect(prune(msgs, { pruneProtect: 0, pruneMinimum: 0 }, 'o200k')).toMatchObject({ prunedPartIDs: [], tokensFreed: 0 })
    const results = toModelMessages(msgs).filter((m) => m.role === 'tool').flatMap((m) => m.content)
    expect(results[0].output).toEqual({ type: 'text', value: PRUNED })
    expect(results[1].output).toEqual({ type: 'text', value: words(10) })
  })

  it('rejects bad settings with CF_INVALID_ARGUMENT and bad messages with CF_INVALID_MESSAGE', () => {
    expect(() => prune([], { pruneMinimum: -1 })).toThrow(expect.objectContaining({ code: 'CF_INVALID_ARGUMENT' }))
    expect(() => prune([], {}, 'p50k' as never)).toThrow(expect.objectContaining({ code: 'CF_INVALID_ARGUMENT' }))
    expect(() => prune([{ id: 'x' } as never])).toThrow(expect.objectContaining({ code: 'CF_INVALID_MESSAGE' }))
  })
})

describe('prune and provider usage', () => {
  it('what is cleared before the newest usage report comes off the reported usage', () => {
    const msgs = [...turnsWithOutputs([30_000, 30_000, 30_000, 30_000]), answered('a5', { input: 125_000, output: 100 })]
    const s = Session.fromMessages(msgs, exact())
    expect(s.usage()).toMatchObject({ source: 'usage', tokens: 125_100 })
    const r = s.prune()
    expect(r.prunedPartIDs).toEqual(['t1'])
    expect(s.usage().tokens).toBe(125_100 - r.tokensFreed)
  })

  it('a newer usage report on the same answer (the next step, measured after the prune) is taken as is', () => {
    // An agent that prunes between steps (DESIGN: "checks pressure after each step, runs the cheap
    // passes first") then updates the answer with the provider's usage for the next step.
    const msgs = [...turnsWithOutputs([30_000, 30_000, 30_000, 30_000]), answered('a5', { input: 125_000, output: 100 })]
    const s = Session.fromMessages(msgs, exact())
    const r = s.prune()
    expect(s.usage().tokens).toBe(125_100 - r.tokensFreed)
    // streaming more text without new usage keeps the pruned count
    s.update(answered('a5', { input: 125_000, output: 100 }, 'ok, more'))
    expect(s.usage().tokens).toBe(125_100 - r.tokensFreed)
    // the provider now reports the pruned context: that report is the truth
    s.update(answered('a5', { input: 95_000, output: 200 }, 'ok, more'))
    expect(s.usage()).toMatchObject({ source: 'usage', tokens: 95_200 })
  })

  it('when the newest report is withdrawn, the previous one is used without subtracting what it never saw', () => {
    const msgs = [
      user('u1', 'q1'),
      answered('a1', { input: 1_000, output: 0 }, 'ok'),
      user('u2', 'q2'),
      assistant('aT', [tool('c', 'bash', completed(words(30_000)), 'tt')], { finish: 'tool-calls' }),
      user('u3', 'q3'),
      assistant('a3', 'ok', { finish: 'stop' }),
      user('u4', 'q4'),
      answered('a4', { input: 40_000, output: 0 }, 'ok'),
    ]
    const cfg = { pruneProtect: 0, pruneMinimum: 0 }
    const s = Session.fromMessages(msgs, exact(cfg))
    expect(s.prune().prunedPartIDs).toEqual(['tt'])
    // a4 turns out to have failed: its usage no longer counts
    s.update(assistant('a4', 'ok', { error: { name: 'APIError', message: 'overloaded' } }))
    // a1's report (1000) predates aT entirely; aT is counted locally, already as cleared
    const fresh = Session.fromMessages(s.messages(), exact(cfg)).usage()
    expect(fresh).toMatchObject({ source: 'mixed', usageTokens: 1_000 })
    expect(s.usage()).toEqual(fresh)
  })

  it('a summary that fails after a prune does not bring the cleared tokens back', () => {
    const msgs = [...turnsWithOutputs([30_000, 30_000, 30_000, 30_000]), answered('a5', { input: 125_000, output: 100 })]
    const s = Session.fromMessages(msgs, exact())
    const r = s.prune()
    expect(r.tokensFreed).toBeGreaterThan(29_000)
    s.append(request('c1'))
    s.append(summary('s1', 'c1', { finish: null, body: 'Sum' }))
    const before = s.usage().tokens
    expect(before).toBe(125_100 - r.tokensFreed + msgTokens(request('c1')) + msgTokens(summary('s1', 'c1', { finish: null, body: 'Sum' })))
    // the summary stream ends in an error: no token count changes
    s.update(summary('s1', 'c1', { finish: 'error', error: { name: 'APIError', message: 'overloaded' }, body: 'Sum' }))
    expect(s.usage().tokens).toBe(before)
  })

  it('without usage, a pruned session counts like a fresh one built from its messages', () => {
    const s = Session.fromMessages(turnsWithOutputs([30_000, 30_000, 30_000, 30_000]), exact())
    s.prune()
    expect(s.usage().tokens).toBe(Session.fromMessages(s.messages(), exact()).usage().tokens)
  })
})
