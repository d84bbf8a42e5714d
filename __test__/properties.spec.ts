// Property tests over random sessions: users, assistants with text / reasoning / tool parts in
// every status (big outputs included), errors, media, and prior compactions (completed or failed).
import fc from 'fast-check'
import { countTokens as gptO200k } from 'gpt-tokenizer/encoding/o200k_base'
import { describe, expect, it } from 'vitest'

import { Session, countTokens, estimateTokens, filterCompacted, isOverflow, prune, toModelMessages, usable } from '../native.js'
import type { CompactionConfig, Message, ModelInfo, ModelMessage, Part } from '../native.js'
import { unknownPart } from '../dist/index.js'
import { MODEL, checkToolPairs, msgTokens, referenceView } from './helpers.js'

const RUNS = Number(process.env.CF_PROPERTY_RUNS ?? 150)

/** `arb` one time in `oneIn`, otherwise undefined. */
const sometimes = <T>(arb: fc.Arbitrary<T>, oneIn: number) =>
  fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb })
/** `arb` most of the time, undefined one time in `oneIn`. */
const usually = <T>(arb: fc.Arbitrary<T>, oneIn: number) =>
  fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: oneIn - 1, arbitrary: arb })
const PNG = 'data:image/png;base64,iVBORw0KGgo='

// ---------------------------------------------------------------------------------------------
// Generators: a session is built from a list of steps, then given sequential ids.

const textArb = fc.oneof(
  { weight: 6, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.integer({ min: 50, max: 2_000 }).map((n) => ' lorem'.repeat(n)) },
)
const outputArb = fc.oneof(
  { weight: 4, arbitrary: textArb },
  { weight: 1, arbitrary: fc.integer({ min: 2_000, max: 15_000 }).map((n) => ' out'.repeat(n)) },
)
// (no "__proto__" keys here: their round trip is checked, and fails, in bad-input.spec.ts)
const inputArb = fc.oneof(
  fc.constant({}),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }).filter((v) => !JSON.stringify(v).includes('"__proto__"')),
)
const callIdArb = fc.oneof(fc.constantFrom('call_1', 'call_2', 'call_1_1', ''), fc.string({ minLength: 1, maxLength: 8 }))
const toolNameArb = fc.constantFrom('bash', 'read', 'edit', 'skill')
const attachmentArb = fc.record({
  mime: fc.constantFrom('image/png', 'application/pdf', 'text/plain'),
  url: fc.constantFrom(PNG, 'data:application/pdf;base64,JVBERi0=', 'https://example.com/a.bin'),
  filename: fc.option(fc.constantFrom('a.png', 'doc.pdf'), { nil: undefined }),
})

type ToolSpec = { kind: 'tool'; callID: string; tool: string; state: Record<string, unknown> }
type PartSpec =
  | { kind: 'text' | 'reasoning'; text: string }
  | ToolSpec
  | { kind: 'file'; mime: string; url: string; filename?: string }
  | { kind: 'other' }

const toolSpecArb: fc.Arbitrary<ToolSpec> = fc.record({
  kind: fc.constant('tool' as const),
  callID: callIdArb,
  tool: toolNameArb,
  state: fc.oneof(
    fc.record({ status: fc.constantFrom('pending', 'running'), input: inputArb }),
    fc.record({
      status: fc.constant('completed'),
      input: inputArb,
      output: outputArb,
      compactedAt: sometimes(fc.constant(1_700_000_000_000), 8),
      attachments: sometimes(fc.array(attachmentArb, { maxLength: 2 }), 5),
    }),
    fc.record({ status: fc.constant('error'), input: inputArb, error: textArb }),
  ),
})
const assistantPartArb: fc.Arbitrary<PartSpec> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom('text' as const, 'reasoning' as const), text: textArb }) },
  { weight: 4, arbitrary: toolSpecArb },
  { weight: 1, arbitrary: fc.constant({ kind: 'other' as const }) },
)
const userPartArb: fc.Arbitrary<PartSpec> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('text' as const), text: textArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('file' as const),
      mime: fc.constantFrom('image/png', 'image/jpeg', 'application/pdf', 'text/plain'),
      url: fc.constantFrom(PNG, 'https://example.com/x', 'data:text/plain;base64,aGk='),
      filename: fc.option(fc.constantFrom('x.png', 'spec.pdf'), { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'other' as const }) },
)
const usageArb = fc.record({
  input: fc.nat(150_000),
  output: fc.nat(5_000),
  cacheRead: fc.option(fc.nat(20_000), { nil: undefined }),
})

/** A position among the messages so far, as a fraction of their number. */
const fraction = fc.integer({ min: 0, max: 999 }).map((n) => n / 1000)

type Step =
  | { kind: 'user'; parts: PartSpec[] }
  | { kind: 'system'; text: string }
  | {
      kind: 'assistant'
      parts: PartSpec[]
      finish?: string
      error?: 'api' | 'aborted'
      tokens?: { input: number; output: number; cacheRead?: number }
    }
  | {
      kind: 'compaction'
      tail: number | 'none' | 'ghost'
      hidden: number | 'none'
      outcome: 'ok' | 'error' | 'unfinished' | 'empty-finish' | 'missing' | 'retry-then-ok'
      auto: boolean
      summaryTokens?: { input: number; output: number; cacheRead?: number }
      summaryText: string
    }

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('user' as const), parts: fc.array(userPartArb, { minLength: 1, maxLength: 3 }) }) },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('assistant' as const),
      parts: fc.array(assistantPartArb, { maxLength: 5 }),
      finish: usually(fc.constantFrom('stop', 'tool-calls', 'length', ''), 4),
      error: sometimes(fc.constantFrom('api' as const, 'aborted' as const), 6),
      tokens: sometimes(usageArb, 3),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('system' as const), text: textArb }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('compaction' as const),
      tail: fc.oneof({ weight: 4, arbitrary: fraction }, fc.constantFrom('none' as const, 'ghost' as const)),
      hidden: fc.oneof({ weight: 2, arbitrary: fc.constant('none' as const) }, fraction),
      outcome: fc.constantFrom('ok', 'ok', 'ok', 'error', 'unfinished', 'empty-finish', 'missing', 'retry-then-ok') as fc.Arbitrary<
        'ok' | 'error' | 'unfinished' | 'empty-finish' | 'missing' | 'retry-then-ok'
      >,
      auto: fc.boolean(),
      summaryTokens: sometimes(usageArb, 2),
      summaryText: textArb,
    }),
  },
)

function makePart(spec: PartSpec, id: string): Part {
  switch (spec.kind) {
    case 'text':
    case 'reasoning':
      return { type: spec.kind, id, text: spec.text }
    case 'file': {
      const f: Record<string, unknown> = { type: 'file', id, mime: spec.mime, url: spec.url }
      if (spec.filename !== undefined) f.filename = spec.filename
      return f as Part
    }
    case 'tool': {
      const state = { ...spec.state }
      if (Array.isArray(state.attachments)) {
        state.attachments = (state.attachments as Array<Record<string, unknown>>).map((a, k) => ({ ...a, id: `${id}_at${k}` }))
      }
      return { type: 'tool', id, callID: spec.callID, tool: spec.tool, state } as Part
    }
    case 'other':
      return unknownPart({ type: 'step-start', id, snapshot: 'abc' })
  }
}

/** Materializes steps into messages with unique ids (m0, m1, ...). */
function build(steps: Step[]): Message[] {
  const msgs: Message[] = []
  const nextId = () => `m${msgs.length}`
  const parts = (id: string, specs: PartSpec[]) => specs.map((p, i) => makePart(p, `${id}_p${i}`))
  const pick = (x: number) => msgs[Math.floor(x * msgs.length)]?.id
  for (const st of steps) {
    if (st.kind === 'user') {
      const id = nextId()
      msgs.push({ id, role: 'user', parts: parts(id, st.parts) })
    } else if (st.kind === 'system') {
      const id = nextId()
      msgs.push({ id, role: 'system', parts: [{ type: 'text', id: `${id}_p0`, text: st.text }] })
    } else if (st.kind === 'assistant') {
      const id = nextId()
      const m: Message = { id, role: 'assistant', parts: parts(id, st.parts) }
      if (st.finish !== undefined) m.finish = st.finish
      if (st.error === 'api') m.error = { name: 'APIError', message: 'overloaded' }
      if (st.error === 'aborted') m.error = { name: 'MessageAbortedError', message: 'aborted' }
      if (st.tokens) m.tokens = st.tokens
      msgs.push(m)
    } else {
      const tailStartID = st.tail === 'none' ? undefined : st.tail === 'ghost' ? 'ghost' : pick(st.tail)
      const hiddenFromID = st.hidden === 'none' ? undefined : pick(st.hidden)
      const reqId = nextId()
      const part: Record<string, unknown> = { type: 'compaction', id: `${reqId}_p0`, auto: st.auto }
      if (tailStartID !== undefined) part.tailStartID = tailStartID
      if (hiddenFromID !== undefined) part.hiddenFromID = hiddenFromID
      msgs.push({ id: reqId, role: 'user', parts: [part as Part] })
      const summary = (finish: string | undefined, error?: boolean) => {
        const id = nextId()
        const m: Message = { id, role: 'assistant', parentID: reqId, summary: true, parts: [{ type: 'text', id: `${id}_p0`, text: st.summaryText }] }
        if (finish !== undefined) m.finish = finish
        if (error) m.error = { name: 'APIError', message: 'summary failed' }
        if (st.summaryTokens) m.tokens = st.summaryTokens
        msgs.push(m)
      }
      switch (st.outcome) {
        case 'ok':
          summary('stop')
          break
        case 'error':
          summary('stop', true)
          break
        case 'unfinished':
          summary(undefined)
          break
        case 'empty-finish':
          summary('')
          break
        case 'retry-then-ok':
          summary(undefined, true)
          summary('stop')
          break
        case 'missing':
          break
      }
    }
  }
  return msgs
}

const historyArb = fc.array(stepArb, { maxLength: 30, size: 'medium' }).map(build)
/** Longer histories with more tool output, for prune. */
const longHistoryArb = fc
  .array(fc.oneof({ weight: 3, arbitrary: stepArb }, fc.record({ kind: fc.constant('assistant' as const), parts: fc.array(toolSpecArb, { minLength: 1, maxLength: 3 }) })), {
    minLength: 6,
    maxLength: 40,
    size: 'medium',
  })
  .map(build)
const cfgArb: fc.Arbitrary<CompactionConfig> = fc.record({
  preserveRecentTokens: fc.nat(8_000),
  tailTurns: sometimes(fc.integer({ min: -1, max: 4 }), 4),
  pruneProtect: fc.nat(3_000),
  pruneMinimum: fc.nat(1_000),
  protectedTools: fc.option(fc.subarray(['skill', 'read']), { nil: undefined }),
})

const opts = (compaction: CompactionConfig = {}) => ({ model: MODEL, compaction, tokenizer: 'o200k' as const })

const isRequest = (m: Message) => m.role === 'user' && m.parts.some((p) => p.type === 'compaction')
const isSummary = (m: Message) => m.role === 'assistant' && m.summary === true
const canStartTail = (m: Message) => (m.role === 'user' && !isRequest(m)) || (m.role === 'assistant' && !isSummary(m) && m.error == null)
const MEDIA = (mime: string) => mime.startsWith('image/') || mime === 'application/pdf'

// ---------------------------------------------------------------------------------------------

describe('properties of random sessions', () => {
  it('(a) toModelMessages keeps every tool call paired with exactly one result, ids unique', () => {
    fc.assert(
      fc.property(
        historyArb,
        fc.record({ stripMedia: fc.boolean(), toolOutputMaxChars: fc.option(fc.nat(300), { nil: undefined }) }),
        (msgs, convert) => {
          const s = Session.fromMessages(msgs, opts())
          const fromSession = s.toModelMessages(convert)
          checkToolPairs(fromSession)
          expect(fromSession).toEqual(toModelMessages(filterCompacted(msgs), convert))
          // the whole history (not filtered) obeys the rule too
          checkToolPairs(toModelMessages(msgs, convert))
          // every message role is one the AI SDK knows, and no message is empty
          for (const m of fromSession) {
            expect(['system', 'user', 'assistant', 'tool']).toContain(m.role)
            expect(m.content.length).toBeGreaterThan(0)
          }
          if (convert.stripMedia) checkNoMedia(fromSession)
        },
      ),
      { numRuns: RUNS },
    )
  })

  it('(b) select keeps a tail that fits the budget, starts on an allowed message, and is maximal', () => {
    fc.assert(
      fc.property(historyArb, cfgArb, (msgs, cfg) => {
        const s = Session.fromMessages(msgs, opts(cfg))
        const ctx = s.context()
        const sel = s.select()
        const budget = cfg.preserveRecentTokens!
        const tok = ctx.map((m) => msgTokens(m))
        const suffix = new Array<number>(ctx.length + 1).fill(0)
        for (let i = ctx.length - 1; i >= 0; i--) suffix[i] = suffix[i + 1] + tok[i]

        if (sel.tailStartID !== undefined) {
          const k = sel.headEnd
          expect(k).toBeGreaterThan(0)
          expect(k).toBeLessThan(ctx.length)
          expect(ctx[k].id).toBe(sel.tailStartID)
          expect(sel.tailTokens).toBe(suffix[k])
          expect(sel.tailTokens).toBeLessThanOrEqual(budget)
          expect(isRequest(ctx[k])).toBe(false)
          expect(isSummary(ctx[k])).toBe(false)
          expect(ctx[k].role === 'assistant' && ctx[k].error != null).toBe(false)
          expect(canStartTail(ctx[k])).toBe(true)
        } else {
          expect(sel.headEnd).toBe(ctx.length)
          expect(sel.tailTokens).toBe(0)
        }

        const ts = s.turns()
        if (cfg.tailTurns !== undefined && cfg.tailTurns <= 0) {
          expect(sel.tailStartID).toBeUndefined()
        } else if (cfg.tailTurns !== undefined) {
          // at most tailTurns turns: the tail starts inside the last tailTurns turns
          if (sel.tailStartID !== undefined && ts.length >= cfg.tailTurns) {
            const first = ts[ts.length - cfg.tailTurns]!
            expect(sel.headEnd).toBeGreaterThanOrEqual(first.start)
          }
        } else {
          // maximal: in the turn just before the tail, no start that fits and is allowed was skipped
          // Messages before the first user turn are a turn of their own (a loop after a summary).
          const everythingFits = suffix[0] <= budget && (ctx.length === 0 || (ts.length > 0 && ts[0].start === 0) || canStartTail(ctx[0]!))
          if (!(sel.tailStartID === undefined && everythingFits)) {
            const k = sel.tailStartID !== undefined ? sel.headEnd : ctx.length
            const turn = ts.find((t) => t.start <= k - 1 && k - 1 < t.end)
            if (turn) {
              for (let i = turn.start; i < k; i++) {
                expect(suffix[i] <= budget && canStartTail(ctx[i]), `a tail could start at ${i} (${ctx[i].id})`).toBe(false)
              }
            }
          }
        }
      }),
      { numRuns: RUNS },
    )
  })

  it('(c) prune is idempotent and only clears old, unprotected, completed outputs', () => {
    // small thresholds, so that prune has something to do in most histories
    const pruneCfgArb = fc.record({
      pruneProtect: fc.nat(400),
      pruneMinimum: fc.nat(200),
      protectedTools: fc.option(fc.subarray(['skill', 'read']), { nil: undefined }),
    })
    fc.assert(
      fc.property(longHistoryArb, pruneCfgArb, (msgs, cfg) => {
        const s = Session.fromMessages(msgs, opts(cfg))
        const stateless = prune(msgs, cfg, 'o200k')
        const first = s.prune()
        expect(first.prunedPartIDs).toEqual(stateless.prunedPartIDs)
        expect(first.tokensFreed).toBe(stateless.tokensFreed)
        expect(first.tokensFreed).toBeGreaterThanOrEqual(0)
        expect(first.messageIDs).toHaveLength(first.prunedPartIDs.length)

        // Protected: the last two user turns, but at most 10 answers (pruneProtectSteps) of them.
        let boundary = -1
        for (let i = msgs.length - 1, users = 0, steps = 0; i >= 0; i--) {
          if (msgs[i]!.role === 'user') users++
          if (users >= 2 || steps >= 10) {
            boundary = i + 1
            break
          }
          if (msgs[i]!.role === 'assistant') steps++
        }
        const secondLastUser = boundary
        const protectedTools = cfg.protectedTools ?? ['skill']
        first.prunedPartIDs.forEach((partID, k) => {
          const at = msgs.findIndex((m) => m.id === first.messageIDs[k])
          expect(at).toBeGreaterThanOrEqual(0)
          expect(at, 'never in the protected last turns and steps').toBeLessThan(secondLastUser)
          const part = msgs[at].parts.find((p) => p.id === partID) as { tool: string; state: { status: string; compactedAt?: number } }
          expect(part.state.status).toBe('completed')
          expect(part.state.compactedAt).toBeUndefined()
          expect(protectedTools).not.toContain(part.tool)
          const after = s.get(msgs[at].id)!.parts.find((p) => p.id === partID) as { state: { compactedAt?: number } }
          expect(after.state.compactedAt).toBe(first.compactedAt)
        })

        const messages = s.messages()
        const usage = s.usage()
        const second = s.prune()
        expect(second.prunedPartIDs).toEqual([])
        expect(second.messageIDs).toEqual([])
        expect(second.tokensFreed).toBe(0)
        expect(s.messages()).toEqual(messages)
        expect(s.usage()).toEqual(usage)
        // what a caller of the stateless prune would see after applying the marks
        expect(prune(messages, cfg, 'o200k').prunedPartIDs).toEqual([])
      }),
      { numRuns: RUNS },
    )
  })

  it('(d) filterCompacted hides exactly the range of the newest completed compaction', () => {
    fc.assert(
      fc.property(historyArb, (msgs) => {
        const out = filterCompacted(msgs)
        const s = Session.fromMessages(msgs, opts())
        expect(s.context()).toEqual(out)
        const shown = out.map((m) => m.id)
        expect(new Set(shown).size).toBe(shown.length)
        const ref = referenceView(msgs)
        expect(shown).toEqual(ref.order.map((i) => msgs[i].id))
        if (!ref.cut) {
          expect(JSON.parse(JSON.stringify(out))).toEqual(JSON.parse(JSON.stringify(msgs)))
          return
        }
        const { request, summary } = ref.cut
        // the request through the summary stand together, and everything after the summary comes last
        const at = shown.indexOf(msgs[request].id)
        expect(shown.slice(at, at + summary - request + 1)).toEqual(msgs.slice(request, summary + 1).map((m) => m.id))
        const after = msgs.slice(summary + 1).map((m) => m.id)
        expect(shown.slice(shown.length - after.length)).toEqual(after)
      }),
      { numRuns: RUNS * 2 },
    )
  })

  it('(e) a session built incrementally (appends and updates) equals one built in one go', () => {
    const updateArb = fc.record({ after: fc.nat(), target: fc.nat(), variant: fc.nat(9) })
    fc.assert(
      fc.property(historyArb, fc.array(updateArb, { maxLength: 6 }), cfgArb, (msgs, updates, cfg) => {
        if (msgs.length === 0) return
        const s = new Session(opts(cfg))
        const current: Message[] = []
        for (let i = 0; i < msgs.length; i++) {
          s.append(msgs[i])
          current.push(msgs[i])
          for (const u of updates.filter((x) => x.after % msgs.length === i)) {
            const t = u.target % current.length
            const next = variant(current[t], u.variant)
            s.update(next)
            current[t] = next
          }
        }
        // (compared as JSON: a -0 inside a tool input may come back as 0)
        expect(JSON.parse(JSON.stringify(s.messages()))).toEqual(JSON.parse(JSON.stringify(current)))
        const batch = Session.fromMessages(current, opts(cfg))
        expect(s.usage().tokens).toBe(batch.usage().tokens)
        expect(s.usage()).toEqual(batch.usage())
        expect(s.context()).toEqual(batch.context())
        expect(s.turns()).toEqual(batch.turns())
        expect(s.select()).toEqual(batch.select())
        expect(s.isOverflow()).toBe(batch.isOverflow())
      }),
      { numRuns: RUNS },
    )
  })
})

describe('compaction', () => {
  it('(g) prepareCompaction summarizes a contiguous run of the context; applyCompaction hides exactly that run', () => {
    const prepArb = fc.record({
      kind: fc.constantFrom('default', 'upTo', 'from', 'protect'),
      pick: fraction,
      turns: fc.integer({ min: 0, max: 2 }),
    })
    fc.assert(
      fc.property(historyArb, cfgArb, prepArb, (msgs, cfg, prep) => {
        const s = Session.fromMessages(msgs, opts(cfg))
        const ctx = s.context()
        const ctxIds = ctx.map((m) => m.id)
        const picked = ctx.length > 0 ? ctxIds[Math.floor(prep.pick * ctx.length)] : 'none'
        const options =
          prep.kind === 'upTo' ? { upTo: picked } : prep.kind === 'from' ? { from: picked } : prep.kind === 'protect' ? { protectFirstTurns: prep.turns } : {}
        let plan: ReturnType<Session['prepareCompaction']>
        try {
          plan = s.prepareCompaction(options)
        } catch (e) {
          // upTo inside the protected head, from before the latest summary, ...
          expect((e as { code?: string }).code).toBe('CF_INVALID_ARGUMENT')
          return
        }
        if (!plan) return
        const start = ctxIds.indexOf(plan.summarizedIDs[0])
        const end = start + plan.summarizedIDs.length
        expect(start).toBeGreaterThanOrEqual(0)
        expect(ctxIds.slice(start, end)).toEqual(plan.summarizedIDs)
        if (plan.tailStartID !== undefined) {
          expect(ctxIds[end]).toBe(plan.tailStartID)
          expect(canStartTail(ctx[end])).toBe(true)
        } else expect(end).toBe(ctx.length)
        expect(plan.tokensBefore).toBe(s.usage().tokens)
        expect(plan.tokensSummarized).toBe(ctx.slice(start, end).reduce((n, m) => n + msgTokens(m), 0))

        const [req, sum] = s.applyCompaction(plan, 'S')
        const after = s.context().map((m) => m.id)
        expect(after).toContain(req.id)
        expect(after).toContain(sum.id)
        // Compaction messages left in the tail may go (a failed one says nothing), but everything
        // else not summarized stays, in order, and nothing hidden comes back …
        const plain = (id: string) => {
          const m = s.get(id)!
          return !isRequest(m) && !isSummary(m)
        }
        const kept = ctxIds.filter((id) => !plan!.summarizedIDs.includes(id))
        expect(after.filter(plain)).toEqual(kept.filter(plain))
        // … and a completed summary that the new one was not written from is not lost.
        for (const id of kept) {
          const m = s.get(id)!
          if (isSummary(m) && m.finish && !m.error) expect(after, `summary ${id} is still needed`).toContain(id)
        }
      }),
      { numRuns: RUNS },
    )
  })
})

/** A deterministic edit of a message, keeping its id (streaming, finishing, failing, retitling). */
function variant(m: Message, v: number): Message {
  const next: Message = structuredClone(m)
  switch (v) {
    case 0:
      delete next.tokens
      break
    case 1:
      next.finish = 'stop'
      next.tokens = { input: 1_000 + next.id.length * 977, output: 20 }
      break
    case 2:
      next.error = { name: 'APIError', message: 'late failure' }
      break
    case 3:
      next.parts = [{ type: 'text', id: `${m.id}_u`, text: `updated ${m.id}` }]
      break
    case 4:
      if (next.role === 'assistant') next.summary = !next.summary
      break
    case 5:
      delete next.error
      next.finish = 'stop'
      break
    case 6:
      delete next.finish
      break
    case 7:
      if (next.role === 'assistant') {
        next.summary = true
        next.finish = 'stop'
        delete next.error
      }
      break
    default:
      next.parts = [...next.parts, { type: 'text', id: `${m.id}_more`, text: ' more'.repeat(50) }]
  }
  return next
}

const index = (msgs: Message[], id: string) => msgs.findIndex((m) => m.id === id)

function checkNoMedia(out: ModelMessage[]) {
  for (const m of out) {
    if (m.role === 'user') {
      for (const c of m.content) {
        expect(c.type).not.toBe('image')
        if (c.type === 'file') expect(MEDIA(c.mediaType)).toBe(false)
      }
    }
    if (m.role === 'tool') {
      for (const r of m.content) {
        if (r.output.type === 'content') {
          for (const item of r.output.value) if (item.type === 'media') expect(MEDIA(item.mediaType)).toBe(false)
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// (f) garbage

const junk = fc.jsonValue({ maxDepth: 3 })
/** Mostly a plausible value, sometimes any JSON value. */
const or = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ weight: 5, arbitrary: valid }, { weight: 1, arbitrary: junk })
const partish = fc.record(
  {
    type: or(fc.constantFrom('text', 'reasoning', 'tool', 'file', 'compaction', 'step-start')),
    id: or(fc.constantFrom('p1', 'p2', '')),
    text: or(fc.string()),
    callID: or(fc.constantFrom('c1', 'c2', '')),
    tool: or(fc.constantFrom('bash', 'skill')),
    state: or(
      fc.record(
        {
          status: or(fc.constantFrom('pending', 'running', 'completed', 'error')),
          input: junk,
          output: or(fc.string()),
          error: or(fc.string()),
          compactedAt: or(fc.nat()),
        },
        { requiredKeys: ['status'] },
      ),
    ),
    mime: or(fc.constantFrom('image/png', 'text/plain')),
    url: or(fc.constantFrom(PNG, '')),
    auto: or(fc.boolean()),
    tailStartID: or(fc.constantFrom('a', 'b', 'c')),
  },
  { requiredKeys: ['type', 'id'] },
)
const messageFields = {
  id: or(fc.constantFrom('a', 'b', 'c', 'd', '')),
  role: or(fc.constantFrom('user', 'assistant', 'system')),
  parts: or(fc.array(partish, { maxLength: 4 })),
  summary: or(fc.boolean()),
  finish: or(fc.constantFrom('stop', '')),
  parentID: or(fc.constantFrom('a', 'b')),
  error: or(fc.record({ name: fc.string(), message: fc.string() })),
  tokens: or(fc.record({ input: or(fc.nat()), output: or(fc.nat()), total: or(fc.nat()) }, { requiredKeys: ['input', 'output'] })),
}
const FIELDS = ['id', 'role', 'parts', 'summary', 'finish', 'parentID', 'error', 'tokens', 'time', 'model'] as const
const PART_FIELDS = ['id', 'type', 'text', 'state', 'callID', 'tool', 'mime', 'url', 'auto', 'tailStartID', 'filename'] as const
const STATE_FIELDS = ['status', 'input', 'output', 'error', 'compactedAt', 'attachments'] as const
/** A valid message from a random history with one field (of the message, a part or a tool state) replaced by junk. */
const mutated = fc
  .tuple(
    historyArb.filter((m) => m.length > 0),
    fc.nat(),
    fc.oneof(
      fc.constantFrom(...FIELDS).map((f) => ['message', f] as const),
      fc.constantFrom(...PART_FIELDS).map((f) => ['part', f] as const),
      fc.constantFrom(...STATE_FIELDS).map((f) => ['state', f] as const),
    ),
    junk,
  )
  .map(([msgs, i, [where, field], value]) => {
    const m = structuredClone(msgs[i % msgs.length]) as unknown as Record<string, unknown>
    const part = (m.parts as Array<Record<string, unknown>>)[0]
    if (where === 'message' || !part) m[field] = value
    else if (where === 'part') part[field] = value
    else if (part.state && typeof part.state === 'object') (part.state as Record<string, unknown>)[field] = value
    else part[field] = value
    return m
  })
const messageish = fc.oneof(
  fc.record(messageFields, { requiredKeys: ['id', 'role', 'parts'] }),
  fc.record(messageFields, { requiredKeys: [] }),
  mutated,
)

function appendGarbage(s: Session, g: unknown) {
  const before = s.length
  try {
    s.append(g as Message)
  } catch (e) {
    expect(e).toBeInstanceOf(Error)
    expect(String((e as { code?: unknown }).code), `error: ${(e as Error).message}`).toMatch(/^CF_/)
    expect(s.length).toBe(before)
    return
  }
  expect(s.length).toBe(before + 1)
}

function stillConsistent(s: Session) {
  const messages = s.messages()
  expect(s.context()).toEqual(filterCompacted(messages))
  checkToolPairs(s.toModelMessages())
  expect(s.usage()).toEqual(Session.fromMessages(messages, opts()).usage())
  s.select()
  s.turns()
  s.prune()
}

describe('(f) garbage passed to append never crashes', () => {
  it('random JSON values and message-shaped junk: appended, or rejected with a CF_ code; the session stays consistent', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(junk, messageish), { minLength: 1, maxLength: 8 }), (garbage) => {
        const s = new Session(opts())
        s.append({ id: 'seed', role: 'user', parts: [{ type: 'text', id: 'p', text: 'hi' }] })
        for (const g of garbage) appendGarbage(s, g)
        stillConsistent(s)
      }),
      { numRuns: RUNS * 2 },
    )
  })

  it('any JS value (undefined, NaN, -0, Map, Date, typed arrays, sparse arrays, ...): appended, or rejected with a CF_ code', () => {
    const anything = fc.anything({
      maxDepth: 3,
      withBoxedValues: true,
      withMap: true,
      withSet: true,
      withObjectString: true,
      withNullPrototype: true,
      withBigInt: true,
      withDate: true,
      withTypedArray: true,
      withSparseArray: true,
      withUnicodeString: true,
    })
    const messageWithAnything = fc.record(
      { id: fc.constantFrom('x', 'y'), role: fc.constantFrom('user', 'assistant'), parts: fc.constant([]), extra: anything, tokens: anything },
      { requiredKeys: ['id', 'role', 'parts'] },
    )
    fc.assert(
      fc.property(fc.oneof(anything, messageWithAnything), (g) => {
        const s = new Session(opts())
        appendGarbage(s, g)
        stillConsistent(s)
      }),
      { numRuns: RUNS * 2 },
    )
  })
})

// ---------------------------------------------------------------------------------------------

describe('properties of the stateless helpers', () => {
  it('countTokens equals gpt-tokenizer o200k on random strings', () => {
    const str = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.string({ unit: 'grapheme', maxLength: 100 }),
      fc.string({ unit: 'binary', maxLength: 100 }),
      fc.array(fc.constantFrom('the', ' ', '\n', '  ', '中文', "'s", '123', '4567', '{"a":', '}', '\t', 'É', '🚀', '<|endoftext|>'), { maxLength: 60 }).map((a) => a.join('')),
    )
    fc.assert(
      fc.property(str, (t) => {
        expect(countTokens(t, 'o200k')).toBe(gptO200k(t, { disallowedSpecial: new Set() }))
      }),
      { numRuns: RUNS * 2 },
    )
  })

  it('estimateTokens is 0 only for the empty string and nearly additive', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.string({ maxLength: 200 }), (a, b) => {
        const ea = estimateTokens(a)
        const eb = estimateTokens(b)
        expect(ea === 0).toBe(a.length === 0)
        const eab = estimateTokens(a + b)
        expect(eab).toBeLessThanOrEqual(ea + eb)
        expect(eab).toBeGreaterThanOrEqual(ea + eb - 2)
      }),
      { numRuns: RUNS * 2 },
    )
  })

  it('usable and isOverflow follow the opencode formula', () => {
    const limitArb = fc.record({
      context: fc.oneof(fc.constant(0), fc.nat(2_000_000)),
      input: fc.option(fc.nat(1_000_000), { nil: undefined }),
      output: fc.option(fc.nat(200_000), { nil: undefined }),
    })
    const cfgArb2 = fc.record({ reserved: fc.option(fc.nat(100_000), { nil: undefined }), auto: fc.option(fc.boolean(), { nil: undefined }) })
    fc.assert(
      fc.property(limitArb, cfgArb2, fc.nat(3_000_000), (limit, cfg, tokens) => {
        const model: ModelInfo = { limit }
        const maxOutput = Math.min(limit.output || 32_000, 32_000)
        let expected: number
        if (limit.context === 0) expected = 0
        else if (limit.input) expected = Math.max(0, limit.input - (cfg.reserved ?? Math.min(20_000, maxOutput)))
        else expected = Math.max(0, limit.context - Math.max(maxOutput, cfg.reserved ?? 0))
        expect(usable({ model, cfg })).toBe(expected)
        const overflow = cfg.auto !== false && limit.context !== 0 && tokens >= expected
        expect(isOverflow({ tokens, model, cfg })).toBe(overflow)
      }),
      { numRuns: RUNS * 2 },
    )
  })
})
