// The cache-aware prune policy and what it reads: prune dry runs, the last request, the context's
// counts, `decidePrune` judged by the messages' own times or an injected clock, and the
// AutoCompactor's default policy. One prune answer for a history and for its context.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import { AutoCompactor, Session } from '../dist/index.js'
import { prune } from '../dist/native.js'
import type { CompactionConfig, Message, SessionOptions } from '../dist/index.js'
import type { ModelCost, ModelInfo } from '../dist/native.js'
import { assistant, filler, snapshot, tool, user } from './compact-fixtures.js'

/** usable = 100000 − 10000 = 90000 tokens. */
const MODEL: ModelInfo = { providerID: 't', modelID: 'm', limit: { context: 100_000, output: 10_000 } }
const NO_CACHE: ModelCost = { input: 3, output: 15 }
const MINUTE = 60_000
const T0 = Date.UTC(2026, 0, 1)

function options(compaction: CompactionConfig = {}, extra: Partial<SessionOptions> = {}): SessionOptions {
  return { model: MODEL, tokenizer: 'estimate', compaction: { pruneProtect: 2_000, pruneMinimum: 500, ...compaction }, ...extra }
}

/** `turns` turns from `at`, a minute apart: a request, an answer with a tool call (`words` of output), a closing answer. */
function turnsFrom(start: number, turns: number, at: number, words = 600): Message[] {
  const out: Message[] = []
  for (let t = start; t < start + turns; t++) {
    const time = at + (t - start) * MINUTE
    out.push(user(`u${t}`, `Request ${t}.`, { time: { created: time } }))
    out.push(
      assistant(`a${t}`, [tool('bash', { status: 'completed', input: { command: `make s${t}` }, output: filler(words, `o${t}`), time: { start: time, end: time + 1 } })], {
        time: { created: time + 1_000, completed: time + 2_000 },
      }),
    )
    out.push(assistant(`b${t}`, `Done with ${t}.`, { time: { created: time + 3_000, completed: time + 4_000 } }))
  }
  return out
}

function sessionOf(messages: Message[], o: SessionOptions = options()): Session {
  const s = new Session(o)
  for (const m of messages) s.append(m)
  return s
}

describe('prune({ dryRun: true })', () => {
  it('reports exactly what the prune then does, and where the prompt first changes, changing nothing', () => {
    const s = sessionOf(turnsFrom(0, 12, T0))
    const before = snapshot(s)
    const dry = s.prune({ dryRun: true })
    expect(dry.dryRun).toBe(true)
    expect(dry.prunedPartIDs.length).toBeGreaterThan(0)
    expect(snapshot(s)).toEqual(before)

    const counts = s.contextTokens()
    const first = counts.ids.indexOf(dry.firstChangedID!)
    expect(first).toBeGreaterThanOrEqual(0)
    const from = counts.tokens.slice(first).reduce((a, b) => a + b, 0)
    expect(dry.tokensFromFirstChanged).toBe(from - dry.tokensFreed)

    const done = s.prune()
    expect(done.dryRun).toBe(false)
    expect(done.prunedPartIDs).toEqual(dry.prunedPartIDs)
    expect(done.tokensFreed).toBe(dry.tokensFreed)
    expect(done.firstChangedID).toBe(dry.firstChangedID)
    expect(done.tokensFromFirstChanged).toBe(dry.tokensFromFirstChanged)
    const after = s.contextTokens()
    expect(after.tokens.slice(first).reduce((a, b) => a + b, 0)).toBe(done.tokensFromFirstChanged)
    expect(s.prune({ dryRun: true }).prunedPartIDs).toEqual([])
  })

  it('names a bad option', () => {
    const s = sessionOf(turnsFrom(0, 2, T0))
    expect(() => s.prune({ dryRun: 'yes' } as never)).toThrow(expect.objectContaining({ code: 'CF_INVALID_ARGUMENT' }))
  })
})

describe('contextTokens() and the last request', () => {
  it("gives each context message's count, adding up to the local count", () => {
    const s = sessionOf(turnsFrom(0, 5, T0))
    const c = s.contextTokens()
    expect(c.ids).toEqual(s.context().map((m) => m.id))
    expect(c.tokens.reduce((a, b) => a + b, 0)).toBe(s.usage().localTokens)
  })

  it('reads the last request from the newest answer, or from recordRequest', () => {
    const s = sessionOf(turnsFrom(0, 3, T0))
    expect(s.lastRequest()).toEqual({ at: T0 + 2 * MINUTE + 3_000, messages: 8, recorded: false, unsent: 1 })
    const r = s.recordRequest(T0 + 10 * MINUTE)
    expect(r).toEqual({ at: T0 + 10 * MINUTE, messages: 9, recorded: true, unsent: 0 })
    expect(s.lastRequest()).toEqual(r)
    // Without a time: the newest message's own.
    expect(s.recordRequest().at).toBe(T0 + 2 * MINUTE + 4_000)
    expect(() => s.recordRequest(Number.NaN)).toThrow(expect.objectContaining({ code: 'CF_INVALID_ARGUMENT' }))
  })

  it("counts the context's messages that arrived after the last request, as contextTokens() does", () => {
    const s = sessionOf(turnsFrom(0, 3, T0))
    expect(s.lastRequest()?.unsent).toBe(s.contextTokens().unsent)
    s.recordRequest()
    s.append(turnsFrom(3, 1, T0)[0]!)
    expect(s.lastRequest()?.unsent).toBe(1)
    expect(s.contextTokens().unsent).toBe(1)
  })
})

describe('decidePrune()', () => {
  it('keeps a warm cache near the threshold, prunes once it has gone cold, judged by the clock given', () => {
    const s = sessionOf(turnsFrom(0, 30, T0), options({ pruneProtect: 20_000 }))
    const last = T0 + 29 * MINUTE
    const threshold = s.usage().tokens + 2_000
    const warm = s.decidePrune({ now: last + MINUTE, threshold })
    expect(warm).toMatchObject({ warm: true, prune: false, threshold })
    expect(warm.freed).toBeGreaterThan(0)
    expect(warm.cost).toBeGreaterThan(warm.saving)
    expect(warm.saving).toBeGreaterThan(0)
    const cold = s.decidePrune({ now: last + 10 * MINUTE, threshold })
    expect(cold).toMatchObject({ warm: false, cost: 0, prune: true, saving: warm.saving })
    expect(cold.result).toMatchObject({ dryRun: true, tokensFreed: cold.freed })
  })

  it("judges the cache by the messages' own times, not the wall clock", () => {
    // Messages from 2026: the wall clock is far later, yet the cache counts as warm.
    const s = sessionOf(turnsFrom(0, 30, T0))
    expect(s.decidePrune().warm).toBe(true)
  })

  it('never prunes just below the threshold, with or without a cache', () => {
    for (const extra of [{}, { cache: { prices: NO_CACHE } }] as const) {
      const s = sessionOf(turnsFrom(0, 60, T0), options({ pruneProtect: 30_000 }, extra))
      const d = s.decidePrune({ now: T0 + 3 * 60 * MINUTE, threshold: s.usage().tokens + 1_000 })
      expect(d).toMatchObject({ warm: false, cost: 0, prune: false })
      expect(d.freed).toBeGreaterThan(0)
      expect(d.saving).toBeLessThan(0)
      // Far from the threshold the same prune pays.
      expect(s.decidePrune({ now: T0 + 3 * 60 * MINUTE }).prune).toBe(true)
    }
  })

  it('prices from the options win over the model, and a 1-hour cache stays warm longer', () => {
    const s = sessionOf(turnsFrom(0, 30, T0), options({}, { cache: { ttl: '1h' } }))
    expect(s.decidePrune({ now: T0 + 29 * MINUTE + 30 * MINUTE }).warm).toBe(true)
    expect(() => new Session(options({}, { cache: { ttl: '2h' as never } }))).toThrow(/cache\.ttl/)
    expect(() => new Session(options({}, { cache: { prices: { input: -1, output: 1 } } }))).toThrow(/cache\.prices\.input/)
  })
})

describe("the AutoCompactor's cache policy", () => {
  const summarizer = async () => ({ text: '## Goal\n- the summary' })

  it('prunes after a cold gap, and not while the cache is warm', async () => {
    const warm = sessionOf(turnsFrom(0, 30, T0), options({ pruneProtect: 20_000 }))
    const compactAt = (warm.usage().tokens + 2_000) / warm.usage().usable
    let now = T0 + 29 * MINUTE + 10_000
    const auto = new AutoCompactor(warm, { summarizer, compactAt, clock: () => now })
    const events: unknown[] = []
    auto.on('prune', (e) => events.push(e))
    expect(auto.prunePolicy).toBe('cache')
    expect((await auto.afterStep()).pruned).toBeUndefined()

    now += 30 * MINUTE
    const r = await auto.afterStep()
    expect(r.pruned?.prunedPartIDs.length).toBeGreaterThan(0)
    expect(r.compaction).toBeUndefined()
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ decision: { prune: true, warm: false } })
  })

  it('prunes the kept tail in the step that compacts (one break for both)', async () => {
    // A small window: the context overflows; the tail kept verbatim holds old outputs.
    const small: ModelInfo = { providerID: 't', modelID: 'm', limit: { context: 30_000, output: 4_000 } }
    const s = sessionOf(turnsFrom(0, 60, T0, 300), { ...options({ preserveRecentTokens: 12_000, pruneProtect: 1_000 }), model: small })
    expect(s.isOverflow()).toBe(true)
    const auto = new AutoCompactor(s, { summarizer, clock: () => T0 + 60 * MINUTE })
    const r = await auto.afterStep()
    expect(r.compaction?.status).toBe('compacted')
    expect(r.pruned?.prunedPartIDs.length).toBeGreaterThan(0)
    const context = new Set(s.context().map((m) => m.id))
    for (const id of r.pruned!.messageIDs) expect(context.has(id), `${id} is in the kept tail`).toBe(true)
  })

  it("keeps today's rules by name: 'opencode' prunes every step, 'never' never", async () => {
    const a = sessionOf(turnsFrom(0, 12, T0))
    expect((await new AutoCompactor(a, { summarizer, prune: 'opencode' }).afterStep()).pruned).toBeDefined()
    const b = sessionOf(turnsFrom(0, 12, T0))
    expect((await new AutoCompactor(b, { summarizer, prune: 'never', clock: () => T0 * 2 }).afterStep()).pruned).toBeUndefined()
    expect(() => new Session(options({ prune: 'sometimes' as never }))).toThrow(/compaction\.prune/)
  })
})

describe('one prune answer for a history and its context', () => {
  it('prune(messages), prune(context()), a dry run and session.prune() agree, after compactions too', async () => {
    const arb = fc.record({
      before: fc.integer({ min: 2, max: 14 }),
      after: fc.integer({ min: 0, max: 8 }),
      words: fc.integer({ min: 20, max: 400 }),
      tail: fc.integer({ min: 0, max: 6_000 }),
      cfg: fc.record({ pruneProtect: fc.nat(3_000), pruneMinimum: fc.nat(800) }),
    })
    await fc.assert(
      fc.asyncProperty(arb, async ({ before, after, words, tail, cfg }) => {
        const o = options({ ...cfg, preserveRecentTokens: tail })
        const s = sessionOf(turnsFrom(0, before, T0, words), o)
        const plan = s.prepareCompaction()
        if (plan) s.applyCompaction(plan, 'the summary')
        for (const m of turnsFrom(before, after, T0 + before * MINUTE, words)) s.append(m)
        const fromHistory = prune(s.messages(), o.compaction, 'estimate')
        const fromContext = prune(s.context(), o.compaction, 'estimate')
        const dry = s.prune({ dryRun: true })
        const done = s.prune()
        for (const r of [fromContext, dry, done]) {
          expect(r.prunedPartIDs).toEqual(fromHistory.prunedPartIDs)
          expect(r.tokensFreed).toBe(fromHistory.tokensFreed)
        }
      }),
      { numRuns: 60 },
    )
  })
})

describe('the compaction threshold by the same arithmetic', () => {
  const summarizer = async () => ({ text: '## Goal\n- the summary' })

  it("compacts at decidePrune's cheapest threshold under the cache policy, before the window; compactAt: 1 keeps overflow", async () => {
    const build = () => sessionOf(turnsFrom(0, 60, T0, 300), options({ pruneProtect: 100_000 }))
    const probe = build()
    const { cheapestThreshold, threshold, afterCompaction } = probe.decidePrune()
    expect(cheapestThreshold).toBeLessThan(threshold)
    // Never below 0.6 of the way from the size after a compaction to the window: at most 1.67× as many compactions.
    expect(cheapestThreshold).toBeGreaterThanOrEqual(Math.floor(afterCompaction + 0.6 * (threshold - afterCompaction)))

    // Grow a session past that threshold, below the window.
    const s = sessionOf([], options({ pruneProtect: 100_000 }))
    const auto = new AutoCompactor(s, { summarizer, clock: () => T0 + 1_000 * MINUTE })
    const atOverflow = new AutoCompactor(s, { summarizer, compactAt: 1, clock: () => T0 + 1_000 * MINUTE })
    let t = 0
    let compacted: number | undefined
    while (compacted === undefined && t < 200) {
      for (const m of turnsFrom(t, 1, T0 + t * MINUTE, 300)) s.append(m)
      t++
      // The at-overflow compactor, asked first, never compacts below the window.
      expect((await atOverflow.afterStep()).compaction).toBeUndefined()
      const before = s.usage().tokens
      const r = await auto.afterStep()
      if (r.compaction) compacted = before
    }
    expect(compacted).toBeDefined()
    expect(compacted!).toBeLessThan(s.usage().usable)
  })

  it('waits one step when the step that reached the threshold is large and unread, and compacts once the model has read it', async () => {
    const clock = () => T0 + 1_000 * MINUTE
    /** A session grown by turns (every answer after a recorded request) to `below` tokens under the cheapest threshold; the tail keeps `tail` tokens. */
    const grown = async (below: number, tail = 2_000) => {
      const s = sessionOf([], options({ pruneProtect: 100_000, preserveRecentTokens: tail }))
      const auto = new AutoCompactor(s, { summarizer, clock })
      for (let t = 0; s.usage().tokens < s.decidePrune({ threshold: 'cost' }).cheapestThreshold - below; t++) {
        for (const m of turnsFrom(t, 1, T0 + t * MINUTE, 300)) {
          if (m.role === 'assistant') s.recordRequest(m.time!.created)
          s.append(m)
        }
        expect((await auto.afterStep()).compaction).toBeUndefined()
      }
      s.append(user('ask', 'Read the whole log.', { time: { created: T0 + 500 * MINUTE } }))
      s.recordRequest(T0 + 500 * MINUTE)
      return { s, auto }
    }
    const step = (id: string, words: number) =>
      assistant(id, [tool('bash', { status: 'completed', input: { command: 'cat log' }, output: filler(words, id), time: { start: 1, end: 2 } })], {
        time: { created: T0 + 501 * MINUTE, completed: T0 + 501 * MINUTE + 1 },
      })

    // A large output takes the context past the threshold, the model has not read it, and after
    // one more step the tail would no longer keep it: wait.
    const { s, auto } = await grown(1_000)
    s.append(step('big', 3_000))
    expect(s.usage().tokens).toBeGreaterThanOrEqual(s.decidePrune({ threshold: 'cost' }).cheapestThreshold)
    expect(s.isOverflow()).toBe(false)
    expect(s.decidePrune({ threshold: 'cost' }).deferCompaction).toBe(true)
    const waited = await auto.afterStep()
    expect(waited.deferred).toBe(true)
    expect(waited.compaction).toBeUndefined()
    // The next request sends it; the answer that follows is short: now the compaction runs.
    s.recordRequest(T0 + 502 * MINUTE)
    s.append(assistant('done', 'The log shows one failure.', { time: { created: T0 + 502 * MINUTE } }))
    expect(s.decidePrune({ threshold: 'cost' }).deferCompaction).toBe(false)
    const next = await auto.afterStep()
    expect(next.deferred).toBeUndefined()
    expect(next.compaction?.status).toBe('compacted')

    // Over the window, nothing waits: there is no room for another request.
    const full = await grown(1_000)
    full.s.append(step('huge', 60_000))
    expect(full.s.isOverflow()).toBe(true)
    expect(full.s.decidePrune({ threshold: 'cost' }).deferCompaction).toBe(false)
    expect((await full.auto.afterStep()).compaction?.status).toBe('compacted')

    // A tail that keeps the step after one more anyway: waiting gains nothing.
    const kept = await grown(1_000, 15_000)
    kept.s.append(step('big', 3_000))
    expect(kept.s.decidePrune({ threshold: 'cost' }).deferCompaction).toBe(false)
    expect((await kept.auto.afterStep()).compaction?.status).toBe('compacted')

    // Another policy never waits.
    const other = await grown(1_000)
    other.s.append(step('big', 3_000))
    const tier = new AutoCompactor(other.s, { summarizer, prune: 'tier', compactAt: 'cost', clock })
    expect((await tier.afterStep()).compaction?.status).toBe('compacted')
  })
})
