// The offline summary fits its budget, counted with the session's tokenizer, and stays bounded
// across repeated compactions (each one updating the previous summary); what it leaves out of the
// facts the summary must keep, the loss audit restores or reports.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

import { Session, compact, countTokens, extractiveSummarizer } from '../dist/index.js'
import { extractiveSummary } from '../dist/summarizers/extractive.js'
import { unframeSummary } from '../dist/prompt.js'
import type { Message, Summarizer, SummaryRequest } from '../dist/index.js'

const PROGRAMS = ['grep', 'npm', 'git', 'cargo', 'sed', 'ls', 'node', 'make']
const WORDS = ['ledger', 'invoice', 'export', 'parser', 'report', 'queue', 'cache', 'billing', 'schema', 'worker']

/** One step of a random history: a user message (a constraint, a ticket, a URL, a question) or a tool call. */
const step = fc.oneof(
  fc.record({
    kind: fc.constant('user' as const),
    text: fc.oneof(
      fc.tuple(fc.constantFrom('Never', 'Always', 'Do not', 'Only'), fc.array(fc.constantFrom(...WORDS), { minLength: 4, maxLength: 40 })).map(
        ([m, w]) => `${m} change the ${w.join(' ')} files without asking.`,
      ),
      fc.integer({ min: 1, max: 99_999 }).map((n) => `Look at ENG-${n} and https://example.com/issues/${n} first.`),
      fc.array(fc.constantFrom(...WORDS), { minLength: 2, maxLength: 12 }).map((w) => `What about the ${w.join(' ')}?`),
    ),
  }),
  fc.record({
    kind: fc.constant('tool' as const),
    program: fc.constantFrom(...PROGRAMS),
    path: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }).map((w) => `src/${w.join('/')}.ts`),
    error: fc.boolean(),
    lines: fc.integer({ min: 1, max: 60 }),
  }),
)

type Step = typeof step extends fc.Arbitrary<infer T> ? T : never

let ids = 0
function append(s: Session, steps: Step[]): void {
  for (const st of steps) {
    const n = ++ids
    if (st.kind === 'user') {
      s.append({ id: `u${n}`, role: 'user', parts: [{ type: 'text', id: `ut${n}`, text: st.text }] } as Message)
      continue
    }
    const output = Array.from({ length: st.lines }, (_, i) => `${st.path}:${i + 1}: ${WORDS[i % WORDS.length]} ok`).join('\n')
    const state = st.error
      ? { status: 'error', input: { command: `${st.program} ${st.path}` }, error: `${st.program}: ${st.path}: failed with code ${n % 7}` }
      : { status: 'completed', input: { command: `${st.program} ${st.path}` }, output }
    s.append({
      id: `a${n}`,
      role: 'assistant',
      parts: [
        { type: 'tool', id: `at${n}`, callID: `c${n}`, tool: 'bash', state },
        { type: 'text', id: `ax${n}`, text: `Checked ${st.path}.` },
      ],
    } as Message)
  }
}

const history = fc.array(step, { minLength: 20, maxLength: 120 })

describe('the extractive summary`s budget', () => {
  it('fits any budget, counted with the session`s tokenizer', () => {
    fc.assert(
      fc.property(history, fc.integer({ min: 1, max: 4_000 }), fc.constantFrom('o200k' as const, 'cl100k' as const), (steps, budget, tokenizer) => {
        const s = new Session({ model: { limit: { context: 50_000 } }, tokenizer, compaction: { preserveRecentTokens: 500 } })
        s.append({ id: 'first', role: 'user', parts: [{ type: 'text', id: 'ft', text: 'Fix the billing export.' }] } as Message)
        append(s, steps)
        s.append({ id: `last${ids}`, role: 'user', parts: [{ type: 'text', id: `lt${ids}`, text: 'Keep going.' }] } as Message)
        const plan = s.prepareCompaction()
        if (!plan) return
        const text = extractiveSummary(plan, { budget, tokenizer })
        expect(countTokens(text, tokenizer)).toBeLessThanOrEqual(budget)
      }),
      { numRuns: 40 },
    )
  })

  it('over several compactions in a row: each summary within its budget, no growth past it, and the audit restores what it leaves out', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(history, { minLength: 3, maxLength: 5 }), async (rounds) => {
        const s = new Session({ model: { limit: { context: 40_000 } }, tokenizer: 'o200k', compaction: { preserveRecentTokens: 400 } })
        s.append({ id: `first${ids}`, role: 'user', parts: [{ type: 'text', id: `ft${ids}`, text: 'Fix the billing export.' }] } as Message)
        const inner = extractiveSummarizer()
        const seen: Array<{ req: SummaryRequest; text: string }> = []
        const recording: Summarizer = async (req, signal) => {
          const res = await inner(req, signal)
          seen.push({ req, text: res.text })
          return res
        }
        for (const steps of rounds) {
          append(s, steps)
          s.append({ id: `req${++ids}`, role: 'user', parts: [{ type: 'text', id: `rt${ids}`, text: 'Continue with the export.' }] } as Message)
          const before = seen.length
          const r = await compact(s, { summarizer: recording, autoContinue: false })
          if (r.status !== 'compacted') continue
          for (const { req, text } of seen.slice(before)) {
            expect(req.tokenizer).toBe('o200k')
            expect(countTokens(text, 'o200k')).toBeLessThanOrEqual(req.maxOutputTokens)
          }
          // Every fact the summary must keep is in it or the kept messages, restored after it, or reported dropped.
          const body = unframeSummary(r.summary!)
          const { kept, restored, dropped } = r.audit!
          expect(kept.length + restored.length + dropped.length).toBe(r.plan!.keep.length)
          for (const f of restored) expect(body).toContain(f.text.trim().split('\n')[0]!.slice(0, 40))
          for (const d of dropped) expect(d.reason).not.toBe('')
        }
      }),
      { numRuns: 15 },
    )
  })

  it('a long history compacted again and again: the summary stays within the budget the issue measured over', async () => {
    const s = new Session({ model: { limit: { context: 200_000 } }, tokenizer: 'o200k', compaction: { preserveRecentTokens: 2_000 } })
    s.append({ id: 'first', role: 'user', parts: [{ type: 'text', id: 'ft', text: 'Fix the billing export.' }] } as Message)
    const sizes: Array<[number, number]> = []
    const inner = extractiveSummarizer()
    const recording: Summarizer = async (req, signal) => {
      const res = await inner(req, signal)
      sizes.push([countTokens(res.text, 'o200k'), req.maxOutputTokens])
      return res
    }
    const rng = fc.sample(fc.array(step, { minLength: 400, maxLength: 400 }), { numRuns: 6, seed: 18 })
    for (const steps of rng) {
      append(s, steps)
      s.append({ id: `req${++ids}`, role: 'user', parts: [{ type: 'text', id: `rt${ids}`, text: 'Continue with the export.' }] } as Message)
      expect((await compact(s, { summarizer: recording, autoContinue: false })).status).toBe('compacted')
    }
    expect(sizes.length).toBeGreaterThanOrEqual(6)
    for (const [tokens, budget] of sizes) expect(tokens).toBeLessThanOrEqual(budget)
    // Updates do not pile up: the last summary is no larger than the largest budget.
    expect(sizes.at(-1)![0]).toBeLessThanOrEqual(Math.max(...sizes.map(([, b]) => b)))
  })
})
