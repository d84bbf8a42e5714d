// AutoCompactor: pressure events, prune at the prune tier (the `tier` policy), compaction at overflow, the circuit
// breaker, the anti-thrash stop, re-entrancy, all with scripted summarizers.
import { describe, expect, it } from 'vitest'

import { AutoCompactor, Session } from '../dist/index.js'
import { CONTINUE_TEXT } from '../dist/prompt.js'
import type { CompactionConfig, ContextUsage, Summarizer, SummaryRequest } from '../dist/index.js'
import type { AutoCompactorEvents } from '../dist/auto-compactor.js'
import type { ModelInfo } from '../dist/native.js'
import { assistant, filler, snapshot, tool, user } from './compact-fixtures.js'

/** usable = 10000 − 2000 = 8000 tokens. */
const SMALL: ModelInfo = { providerID: 't', modelID: 'small', limit: { context: 10_000, output: 2_000 } }

function session(compaction: CompactionConfig = {}): Session {
  return new Session({ model: SMALL, tokenizer: 'estimate', compaction: { preserveRecentTokens: 600, ...compaction } })
}

let turn = 0
/** Appends turns (a request and a tool call with output) until `until(usage)` holds. */
function grow(s: Session, until: (u: ContextUsage) => boolean, words = 120): void {
  for (let i = 0; i < 500 && !until(s.usage()); i++) {
    const t = ++turn
    s.append(user(`u${t}`, `Request ${t}.`))
    s.append(assistant(`a${t}`, [tool('bash', { status: 'completed', input: { command: `make step${t}` }, output: filler(words, `o${t}`) })]))
  }
  expect(until(s.usage())).toBe(true)
}

function record(auto: AutoCompactor) {
  const events: Array<{ type: keyof AutoCompactorEvents; event: unknown }> = []
  for (const type of ['pressure', 'prune', 'compacting', 'compact', 'tripped'] as const) {
    auto.on(type, (event) => events.push({ type, event }))
  }
  return events
}

function scripted(answer: (req: SummaryRequest) => Promise<{ text: string }> | { text: string }): Summarizer & { calls: number } {
  const fn = (async (req: SummaryRequest) => {
    fn.calls++
    return answer(req)
  }) as Summarizer & { calls: number }
  fn.calls = 0
  return fn
}

const unauthorized = () => {
  throw Object.assign(new Error('401 Unauthorized'), { status: 401 })
}

describe('AutoCompactor', () => {
  it('does nothing at the ok tier, and emits pressure from the notice tier on', async () => {
    // Pressure alone: the default policy would prune old outputs at the notice tier of this window.
    const s = session({ prune: false })
    const sum = scripted(() => ({ text: 'x' }))
    const auto = new AutoCompactor(s, { summarizer: sum })
    const events = record(auto)
    grow(s, (u) => u.pressure > 0.3)
    expect((await auto.afterStep()).usage.tier).toBe('ok')
    expect(events).toHaveLength(0)
    grow(s, (u) => u.tier === 'notice')
    const r = await auto.afterStep()
    expect(r.compaction).toBeUndefined()
    expect(events.map((e) => e.type)).toEqual(['pressure'])
    expect((events[0]!.event as { usage: ContextUsage }).usage.tier).toBe('notice')
    expect(sum.calls).toBe(0)
  })

  it('prunes old tool output at the prune tier, without compacting', async () => {
    const s = session({ prune: true, pruneProtect: 300, pruneMinimum: 200 })
    const sum = scripted(() => ({ text: 'x' }))
    const auto = new AutoCompactor(s, { summarizer: sum })
    expect(auto.prunes).toBe(true)
    const events = record(auto)
    grow(s, (u) => u.tier === 'prune')
    const before = s.usage().tokens
    const r = await auto.afterStep()
    expect(r.pruned?.prunedPartIDs.length).toBeGreaterThan(0)
    expect(r.usage.tokens).toBeLessThan(before)
    expect(events.map((e) => e.type)).toEqual(['pressure', 'prune'])
    expect(sum.calls).toBe(0)
    expect(s.messages().some((m) => m.parts.some((p) => p.type === 'tool' && (p.state as { compactedAt?: number }).compactedAt))).toBe(true)
  })

  it('prune: false leaves tool output alone, whatever the session says', async () => {
    const s = session({ prune: true, pruneProtect: 300, pruneMinimum: 200 })
    const auto = new AutoCompactor(s, { summarizer: scripted(() => ({ text: 'x' })), prune: false })
    expect(auto.prunes).toBe(false)
    grow(s, (u) => u.tier === 'prune')
    const before = snapshot(s)
    const r = await auto.afterStep()
    expect(r.pruned).toBeUndefined()
    expect(snapshot(s)).toEqual(before)
  })

  it("without the option, prunes as the session's compaction.prune says ('cache' by default)", async () => {
    expect(session().options.compaction?.prune).toBe('cache')
    expect(new AutoCompactor(session()).prunePolicy).toBe('cache')
    const off = session({ pruneProtect: 300, pruneMinimum: 200, prune: false })
    expect(off.options.compaction?.prune).toBe('never')
    const quiet = new AutoCompactor(off, { summarizer: scripted(() => ({ text: 'x' })) })
    expect(quiet.prunes).toBe(false)
    grow(off, (u) => u.tier === 'prune')
    const before = snapshot(off)
    expect((await quiet.afterStep()).pruned).toBeUndefined()
    expect(snapshot(off)).toEqual(before)

    // prune: true on the AutoCompactor turns the tier rule on for a session that has it off.
    const forced = new AutoCompactor(off, { summarizer: scripted(() => ({ text: 'x' })), prune: true })
    expect(forced.prunePolicy).toBe('tier')
    expect((await forced.afterStep()).pruned?.prunedPartIDs.length).toBeGreaterThan(0)
  })

  it('compacts at overflow: auto compaction part, continue message, events in order', async () => {
    const s = session()
    const sum = scripted(() => ({ text: '## Goal\n- auto summary' }))
    const auto = new AutoCompactor(s, { summarizer: sum, template: 'anchored' })
    const events = record(auto)
    grow(s, (u) => u.tier === 'compact')
    expect(s.isOverflow()).toBe(true)
    const r = await auto.afterStep()
    expect(r.compaction).toMatchObject({ status: 'compacted', fallback: false })
    expect(sum.calls).toBe(1)
    expect(s.isOverflow()).toBe(false)
    expect(r.usage.tier).toBe('ok')
    expect(events.map((e) => e.type)).toEqual(['pressure', 'compacting', 'compact'])
    const [request, , cont] = r.compaction!.messages!
    expect(request!.parts[0]).toMatchObject({ type: 'compaction', auto: true })
    expect((cont!.parts[0] as { text: string }).text).toBe(CONTINUE_TEXT)
    expect(auto.state).toEqual({ failures: 0, ineffective: 0 })
  })

  it('the circuit breaker trips after 3 consecutive failures, with the reason, and stops calling the summarizer', async () => {
    const s = session()
    const sum = scripted(unauthorized)
    const auto = new AutoCompactor(s, { summarizer: sum })
    const events = record(auto)
    grow(s, (u) => u.tier === 'compact')
    const before = snapshot(s)
    for (let i = 1; i <= 3; i++) {
      const r = await auto.afterStep()
      expect(r.compaction).toMatchObject({ status: 'failed', error: { code: 'CF_AUTH' } })
      expect(auto.state.failures).toBe(i)
    }
    const tripped = events.filter((e) => e.type === 'tripped')
    expect(tripped).toHaveLength(1)
    expect(tripped[0]!.event).toMatchObject({ kind: 'failures' })
    expect((tripped[0]!.event as { reason: string }).reason).toMatch(/3 consecutive compaction failures.*401 Unauthorized/)
    expect(auto.state.tripped?.kind).toBe('failures')
    // Tripped: overflowing, but no more calls.
    const r = await auto.afterStep()
    expect(r.compaction).toBeUndefined()
    expect(r.skipped).toBe(auto.state.tripped!.reason)
    expect(sum.calls).toBe(3)
    expect(snapshot(s)).toEqual(before) // auth failures never touched the session
    // reset() re-arms it.
    auto.reset()
    expect(auto.state).toEqual({ failures: 0, ineffective: 0 })
    await auto.afterStep()
    expect(sum.calls).toBe(4)
  })

  it('a success in between resets the failure count', async () => {
    const s = session()
    let fail = true
    const sum = scripted(() => (fail ? unauthorized() : { text: '## Goal\n- ok' }))
    const auto = new AutoCompactor(s, { summarizer: sum })
    grow(s, (u) => u.tier === 'compact')
    await auto.afterStep()
    await auto.afterStep()
    expect(auto.state.failures).toBe(2)
    fail = false
    expect((await auto.afterStep()).compaction?.status).toBe('compacted')
    expect(auto.state.failures).toBe(0)
    expect(auto.state.tripped).toBeUndefined()
  })

  it('the anti-thrash guard stops after 2 compactions that could not shrink the context', async () => {
    const s = session()
    // A summary larger than the window: no compaction can shrink the context, so none is applied.
    const sum = scripted(() => ({ text: `## Goal\n- ${filler(9_000, 'huge')}` }))
    const auto = new AutoCompactor(s, { summarizer: sum })
    const events = record(auto)
    grow(s, (u) => u.tier === 'compact')
    const length = s.length
    const first = await auto.afterStep()
    expect(first.compaction).toMatchObject({ status: 'skipped', code: 'CF_NOT_SMALLER' })
    expect(s.length).toBe(length)
    expect(s.isOverflow()).toBe(true)
    expect(auto.state.ineffective).toBe(1)
    expect(auto.state.tripped).toBeUndefined()
    // The agent goes on; the next step tries again, still in vain.
    s.append(user('more1', `More work. ${filler(200, 'm1')}`))
    s.append(assistant('more1a', `Done. ${filler(200, 'm2')}`))
    const second = await auto.afterStep()
    expect(second.compaction?.code).toBe('CF_NOT_SMALLER')
    expect(auto.state.ineffective).toBe(2)
    expect(auto.state.tripped?.kind).toBe('thrash')
    expect(auto.state.tripped?.reason).toMatch(/2 compactions in a row could not shrink the context/)
    expect(events.filter((e) => e.type === 'tripped')).toHaveLength(1)
    const third = await auto.afterStep()
    expect(third.skipped).toMatch(/compactions in a row/)
    expect(sum.calls).toBe(2)
  })

  it('never triggers from inside a summarizer call (re-entrancy guard)', async () => {
    const s = session()
    let inner: Awaited<ReturnType<AutoCompactor['afterStep']>> | undefined
    let auto: AutoCompactor | undefined
    const sum = scripted(async () => {
      inner = await auto!.afterStep() // e.g. a summarizer that is itself an agent step
      return { text: '## Goal\n- outer' }
    })
    auto = new AutoCompactor(s, { summarizer: sum })
    grow(s, (u) => u.tier === 'compact')
    expect(auto.busy).toBe(false)
    const outer = await auto.afterStep()
    expect(outer.compaction?.status).toBe('compacted')
    expect(inner?.skipped).toMatch(/re-entrant/)
    expect(inner?.compaction).toBeUndefined()
    expect(sum.calls).toBe(1)
    expect(s.messages().filter((m) => m.summary)).toHaveLength(1)
  })

  it('onOverflow compacts although the local count is under the limit, replaying the rejected message', async () => {
    const s = session()
    grow(s, (u) => u.pressure > 0.5)
    s.append(user('rejected', [{ type: 'text', id: 'rt', text: 'Look at this' }, { type: 'file', id: 'rf', mime: 'image/png', url: 'data:image/png;base64,AAAA', filename: 'huge.png' }]))
    const auto = new AutoCompactor(s, { summarizer: scripted(() => ({ text: '## Goal\n- replayed' })) })
    const r = await auto.onOverflow('rejected')
    expect(r.compaction?.status).toBe('compacted')
    const replayed = r.compaction!.messages!.at(-1)!
    expect(replayed.parts.map((p) => (p as { text?: string }).text)).toEqual(['Look at this', '[Attached image/png: huge.png]'])
    expect(r.compaction!.messages![0]!.parts[0]).toMatchObject({ auto: true, overflow: true })
  })

  it('with auto: false in the session config it never compacts', async () => {
    const s = session({ auto: false })
    const sum = scripted(() => ({ text: 'x' }))
    const auto = new AutoCompactor(s, { summarizer: sum, prune: false })
    grow(s, (u) => u.pressure >= 1)
    const r = await auto.afterStep()
    expect(r.compaction).toBeUndefined()
    expect(sum.calls).toBe(0)
  })

  it('a throwing listener does not break the step; off() unsubscribes', async () => {
    const s = session()
    const auto = new AutoCompactor(s, { summarizer: scripted(() => ({ text: '## Goal\n- ok' })) })
    let calls = 0
    const listener = () => {
      calls++
      throw new Error('UI bug')
    }
    auto.on('pressure', listener)
    grow(s, (u) => u.tier === 'compact')
    expect((await auto.afterStep()).compaction?.status).toBe('compacted')
    expect(calls).toBe(1)
    auto.off('pressure', listener)
    grow(s, (u) => u.tier === 'notice' || u.tier === 'prune' || u.tier === 'compact')
    await auto.afterStep()
    expect(calls).toBe(1)
  })

  it('an abort rejects the step without counting a failure', async () => {
    const s = session()
    const ac = new AbortController()
    const auto = new AutoCompactor(s, {
      summarizer: scripted(() => {
        ac.abort()
        return { text: 'late' }
      }),
    })
    grow(s, (u) => u.tier === 'compact')
    const before = snapshot(s)
    await expect(auto.afterStep({ signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError', code: 'CF_ABORTED' })
    expect(auto.state.failures).toBe(0)
    expect(auto.busy).toBe(false)
    expect(snapshot(s)).toEqual(before)
  })
})
