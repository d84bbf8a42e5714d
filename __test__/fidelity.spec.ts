// Nothing important is forgotten: the loss audit and its repair, facts carried across compactions,
// pins (session, store, filterCompacted), secrets kept out of the summarizer's input, and
// compactions that would not shrink the context.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

import { Session, SessionFile, compact, extractiveSummarizer, filterCompacted } from '../dist/index.js'
import type { CompactionPart, Summarizer, SummaryRequest } from '../dist/index.js'
import { CONSTRAINT, LAST_ERROR, assistant, contextText, options, plantedSession, smallSession, text, tool, user } from './compact-fixtures.js'
import { COMPACTIONS, FACT_KINDS, SHAPE_NAMES, forgetfulSummarizer, generateSession, runSession } from './fidelity-sessions.mjs'

/** A summarizer that forgets everything but a line of prose. */
const SECRETS = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'secrets.json'), 'utf8')) as {
  outputs: Array<{ command: string; output: string; secrets: string[]; keep: string[] }>
}

const forgetful: Summarizer = async () => ({ text: 'Worked on the report command.', finishReason: 'stop' })

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

describe('the loss audit', () => {
  it('restores what a forgetful summary left out, verbatim, and reports it', async () => {
    const { session, modified } = plantedSession()
    const result = await compact(session, { summarizer: forgetful })
    expect(result.status).toBe('compacted')
    const restored = result.audit!.restored.map((f) => f.text)
    expect(restored).toContain('Never use the `any` type in src/report/, and always run `npm test` before saying you are done.')
    expect(restored).toContain(LAST_ERROR)
    expect(result.summary).toContain('## Preserved')
    expect(result.audit!.dropped).toEqual([])
    const seen = contextText(session)
    for (const path of modified) expect(seen).toContain(path)
    // The stored compaction records the audit and the facts the next one carries.
    const request = result.messages![0]!
    const part = request.parts[0] as Record<string, unknown>
    expect((part.audit as { restored: unknown[] }).restored.length).toBe(result.audit!.restored.length)
    expect((part.keep as Array<{ kind: string }>).some((f) => f.kind === 'constraint')).toBe(true)
  })

  it('needs no repair with the extractive summarizer', async () => {
    const { session } = plantedSession()
    const result = await compact(session, { summarizer: extractiveSummarizer() })
    expect(result.audit!.restored).toEqual([])
    expect(result.audit!.kept.length).toBeGreaterThan(5)
    expect(result.summary).not.toContain('## Preserved')
  })

  it('carries facts across three compactions: the third summary still knows the first constraint', async () => {
    const { session } = plantedSession()
    for (let round = 0; round < 3; round++) {
      if (round > 0) {
        for (let t = 0; t < 10; t++) {
          session.append(user(`r${round}u${t}`, `Round ${round} step ${t}: keep going with the next column.`))
          session.append(assistant(`r${round}a${t}`, [tool('edit', { status: 'completed', input: { path: `src/r${round}/c${t}.ts` }, output: 'ok '.repeat(200) }), text('done')]))
        }
      }
      const result = await compact(session, { summarizer: forgetful })
      expect(result.status).toBe('compacted')
      expect(contextText(session)).toContain('Never use the `any` type in src/report/')
    }
  })

  it('with audit: false restores only the latest request', async () => {
    const { session } = plantedSession({ preserveRecentTokens: 600, tailTurns: 0 })
    const result = await compact(session, { summarizer: forgetful, audit: false })
    expect(result.status).toBe('compacted')
    expect(result.audit!.restored.map((f) => f.kind)).toEqual(['request'])
    expect(contextText(session)).not.toContain(CONSTRAINT.slice(0, 30))
    expect(contextText(session)).toContain('Follow-up 45: tidy the help text.')
  })
})

describe('facts across three compactions of generated sessions (48k window)', () => {
  const summarizers: Array<[string, () => Summarizer]> = [
    ['extractive', () => extractiveSummarizer()],
    ['an LLM that forgets every second item', forgetfulSummarizer],
  ]
  for (const shape of SHAPE_NAMES) {
    for (const [name, make] of summarizers) {
      it(`${shape}, ${name}: every fact kind is in the context after each compaction, and no older request is called the latest`, async () => {
        for (const seed of [1, 2]) {
          const rounds = await runSession(generateSession(shape, seed), make)
          expect(rounds.length).toBe(COMPACTIONS)
          for (const [i, r] of rounds.entries()) {
            const where = `seed ${seed}, compaction ${i + 1}`
            for (const kind of FACT_KINDS) {
              expect(r.facts[kind].planted, `${where}: ${kind} planted`).toBeGreaterThan(0)
              expect(r.facts[kind].lost, `${where}: ${kind} lost`).toEqual([])
            }
            expect(r.mislabelled, where).toEqual([])
            expect(r.dropped, where).toBe(0)
            expect(r.after).toBeLessThan(r.before)
          }
        }
      })
    }
  }

  it('the check sees losses: without the audit, the forgetting summarizer loses facts of several kinds', async () => {
    const lost = new Set<string>()
    for (const shape of SHAPE_NAMES) {
      const rounds = await runSession(generateSession(shape, 1), forgetfulSummarizer, { audit: false })
      for (const r of rounds) for (const kind of FACT_KINDS) if (r.facts[kind].lost.length) lost.add(kind)
    }
    expect([...lost].sort()).toEqual(expect.arrayContaining(['constraint', 'decision', 'pin', 'sha', 'ticket']))
  })

  it('the generator is deterministic and its sessions differ by shape and seed', () => {
    const a = generateSession('go-proxy', 3)
    expect(generateSession('go-proxy', 3)).toEqual(a)
    expect(generateSession('go-proxy', 4)).not.toEqual(a)
    const sizes = SHAPE_NAMES.map((s) => generateSession(s, 1).parts[0]!.messages.length)
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(170)
    expect(Math.max(...sizes)).toBeLessThanOrEqual(395)
  })
})

describe('pins', () => {
  it('keeps pinned messages and texts verbatim after a compaction, in filterCompacted too', async () => {
    const s = smallSession(10)
    const pinned = s.pin('u2', { note: 'the spec' })
    expect(pinned).toMatchObject({ messageID: 'u2', note: 'the spec' })
    s.pinText('Deploy target: 10.20.30.40')
    expect(s.pins().length).toBe(2)
    const result = await compact(s, { summarizer: forgetful })
    expect(result.status).toBe('compacted')
    const seen = contextText(s)
    expect(seen).toContain(pinned.text.slice(0, 40))
    expect(seen).toContain('Deploy target: 10.20.30.40')
    // What a stateless consumer holds after filterCompacted still knows the pins.
    const rebuilt = Session.fromMessages(filterCompacted(s.messages()), options())
    expect(rebuilt.pins().map((p) => p.text)).toEqual(s.pins().map((p) => p.text))
    expect(s.unpin(pinned.id)).toBe(true)
    expect(s.unpin('nope')).toBe(false)
    expect(() => s.pin('missing')).toThrow(expect.objectContaining({ code: 'CF_NOT_FOUND' }))
  })

  it('persist in the store', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cf-pins-'))
    dirs.push(dir)
    const path = join(dir, 's.jsonl')
    const store = SessionFile.open(path, { session: options() })
    const s = store.load()
    const m = user('u1', 'Remember: the staging database is read-only.')
    s.append(m)
    store.append(m)
    s.pin('u1')
    s.pinText('Release freeze until Friday')
    store.pins(s.pins())
    store.close()
    const again = SessionFile.open(path, { readOnly: true }).load()
    expect(again.pins()).toEqual(s.pins())
  })
})

describe('secrets', () => {
  it('never reach the summarizer, the summary or the audit', async () => {
    const s = smallSession(6)
    s.append(user('k1', 'Deploy with AWS key AKIAIOSFODNN7EXAMPLE and keep ghp_abcdefghijklmnopqrstuvwxyz0123456789 secret.'))
    s.append(
      assistant('k2', [
        tool('bash', { status: 'completed', input: { command: 'cat .env' }, output: 'DATABASE_URL=postgres://app:s3cr3t-pw9@db:5432/app\nSTRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc' }),
      ]),
    )
    for (let t = 0; t < 6; t++) {
      s.append(user(`z${t}`, `More work ${t} ${'word '.repeat(60)}`))
      s.append(assistant(`y${t}`, `Did ${t} ${'word '.repeat(60)}`))
    }
    const seen: SummaryRequest[] = []
    const result = await compact(s, {
      summarizer: async (req) => {
        seen.push(req)
        return { text: 'summary', finishReason: 'stop' }
      },
    })
    expect(result.status).toBe('compacted')
    const all = JSON.stringify({ seen, summary: result.summary, audit: result.audit })
    for (const secret of ['AKIAIOSFODNN7EXAMPLE', 'ghp_abcdef', 's3cr3t-pw9', 'sk_live_4eC39']) expect(all).not.toContain(secret)
    expect(all).toContain('[REDACTED:aws-access-key]')
    expect(result.plan!.redacted).toBeGreaterThanOrEqual(4)
  })

  it('a corpus of planted credentials in realistic tool output: none leaks, every look-alike survives', async () => {
    const s = smallSession(4)
    for (const [i, o] of SECRETS.outputs.entries()) {
      s.append(user(`q${i}`, `Step ${i}: check the configuration.`))
      s.append(assistant(`r${i}`, [tool('bash', { status: 'completed', input: { command: o.command }, output: o.output })]))
    }
    for (let t = 0; t < 6; t++) {
      s.append(user(`z${t}`, `More work ${t} ${'word '.repeat(60)}`))
      s.append(assistant(`y${t}`, `Did ${t} ${'word '.repeat(60)}`))
    }
    for (const summarizer of [extractiveSummarizer(), forgetful]) {
      const seen: SummaryRequest[] = []
      const session = Session.fromMessages(s.messages(), s.options)
      const result = await compact(session, { summarizer: async (req, signal) => (seen.push(req), summarizer(req, signal)) })
      expect(result.status).toBe('compacted')
      const sent = JSON.stringify(seen)
      const all = JSON.stringify({ sent, summary: result.summary, audit: result.audit, messages: result.messages })
      const leaks = SECRETS.outputs.flatMap((o) => o.secrets).filter((secret) => all.includes(secret))
      expect(leaks).toEqual([])
      const lost = SECRETS.outputs.flatMap((o) => o.keep).filter((k) => !seen.some((req) => req.prompt.includes(k)))
      expect(lost).toEqual([])
    }
  })

  it('can be turned off', async () => {
    const s = new Session(options({ redactSecrets: false, preserveRecentTokens: 200 }))
    s.append(user('u1', 'key AKIAIOSFODNN7EXAMPLE'))
    s.append(assistant('a1', 'ok '.repeat(300)))
    s.append(user('u2', 'next '.repeat(100)))
    const plan = s.prepareCompaction({ upTo: 'a1' })!
    expect(plan.transcript.join('\n')).toContain('AKIAIOSFODNN7EXAMPLE')
    expect(plan.redacted).toBe(0)
  })
})

describe('a compaction never makes the context larger', () => {
  it('is not applied when it would not shrink the context, with a coded reason, and the request stays', async () => {
    const s = new Session(options({ tailTurns: 0 }))
    s.append(user('u1', 'Explain the build: why does `npm run build` take so long on CI? '.repeat(3)))
    s.append(assistant('a1', 'Because it compiles the addon in release mode.'))
    const before = s.messages()
    const result = await compact(s, { summarizer: extractiveSummarizer() })
    expect(result.status).toBe('skipped')
    expect(result.code).toBe('CF_NOT_SMALLER')
    expect(result.reason).toMatch(/would not shrink the context \(\d+ → \d+ tokens\)/)
    expect(s.messages()).toEqual(before)
  })
})

describe('microcompact prune rules', () => {
  it('stub re-reads, duplicates and stale reads, count each rule, and survive the store', () => {
    const body = (s: string) => `${s}\n${'line of the file\n'.repeat(60)}`
    const read = (id: string, path: string, out: string, name = 'read') =>
      assistant(id, [tool(name, { status: 'completed', input: { filePath: path }, output: out })])
    const msgs = [
      user('u1', 'start'),
      read('r1', 'a.rs', body('A')),
      read('r2', 'b.rs', body('B')),
      read('e1', 'b.rs', 'ok', 'edit'),
      read('r3', 'a.rs', body('A')),
      user('u2', 'next'),
      assistant('x', 'ok'),
      user('u3', 'last'),
    ]
    const dir = mkdtempSync(join(tmpdir(), 'cf-micro-'))
    dirs.push(dir)
    const opts = options({ pruneRereads: true, pruneStaleReads: true, pruneDuplicates: true })
    const store = SessionFile.open(join(dir, 's.jsonl'), { session: opts })
    const s = store.load()
    for (const m of msgs) {
      s.append(m)
      store.append(m)
    }
    const before = s.usage().tokens
    const result = s.prune()
    expect(result.messageIDs).toEqual(['r2', 'r1'])
    expect(result.rules.reread.parts).toBe(1)
    expect(result.rules.stale.parts).toBe(1)
    expect(result.rules.age.parts).toBe(0)
    expect(result.rules.reread.tokens + result.rules.stale.tokens).toBe(result.tokensFreed)
    expect(s.usage().tokens).toBe(before - result.tokensFreed)
    expect(result.stubs[1]).toMatch(/^\[Unchanged: same content as the later read of a\.rs \(call /)
    store.prune(result)
    store.close()
    const again = SessionFile.open(join(dir, 's.jsonl'), { readOnly: true }).load()
    expect(JSON.stringify(again.toModelMessages())).toEqual(JSON.stringify(s.toModelMessages()))
    expect(JSON.stringify(s.toModelMessages())).toContain('[Stale: b.rs was modified after this read')
  })
})

describe('the stored compaction', () => {
  it('keeps the audit, the carried facts and the pins through a store reload', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cf-audit-'))
    dirs.push(dir)
    const path = join(dir, 's.jsonl')
    const { session } = plantedSession()
    const store = SessionFile.open(path, { session: options({ preserveRecentTokens: 600 }) })
    for (const m of session.messages()) store.append(m)
    session.pinText('Staging first, always.')
    store.pins(session.pins())
    const result = await compact(session, { summarizer: forgetful })
    for (const m of result.messages!) store.append(m)
    store.close()
    const loaded = SessionFile.open(path, { readOnly: true }).load()
    const request = loaded.context().find((m) => m.parts.some((p) => p.type === 'compaction'))!
    const part = request.parts.find((p) => p.type === 'compaction') as CompactionPart
    expect(part.audit).toEqual({ kept: result.audit!.kept, restored: result.audit!.restored, dropped: result.audit!.dropped })
    expect((part.keep as Array<{ text: string }>).map((f) => f.text)).toContain(CONSTRAINT)
    expect(loaded.pins().map((p) => p.text)).toEqual(['Staging first, always.'])
    // The next compaction of the reloaded session still checks the first one's facts.
    expect(loaded.prepareCompaction({ upTo: loaded.context().at(-1)!.id })?.keep.map((f) => f.text)).toContain(CONSTRAINT)
  })
})
