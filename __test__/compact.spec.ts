// compact(): fidelity of the extractive summary, anchored updates, partial compaction, hooks,
// templates, split turns, overflow replay and aborts (scripted summarizers, no network).
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

import { describe, expect, it } from 'vitest'

import { Session, compact, extractiveSummarizer, filterCompacted } from '../dist/index.js'
import { CONTINUE_TEXT, MEDIA_NOTICE } from '../dist/prompt.js'
import type { Summarizer, SummaryRequest, SummaryResponse } from '../dist/index.js'
import {
  CONSTRAINT,
  EARLIER_ERROR,
  LAST_ERROR,
  assistant,
  contextText,
  filler,
  plantedSession,
  smallSession,
  snapshot,
  splitTurnSession,
  text,
  tool,
  user,
} from './compact-fixtures.js'
import { section } from './fake-openai.js'

type Step = SummaryResponse | Error | ((req: SummaryRequest, signal?: AbortSignal) => SummaryResponse | Promise<SummaryResponse>)

/** A summarizer answering from a script (the last step repeats), recording every request. */
function scripted(...steps: Step[]): Summarizer & { calls: SummaryRequest[] } {
  const calls: SummaryRequest[] = []
  const fn = (async (req: SummaryRequest, signal?: AbortSignal) => {
    calls.push(req)
    const step = steps[Math.min(calls.length - 1, steps.length - 1)]!
    if (step instanceof Error) throw step
    return typeof step === 'function' ? step(req, signal) : step
  }) as Summarizer & { calls: SummaryRequest[] }
  fn.calls = calls
  return fn
}

const summaryText = (s: Session) => {
  const m = s.context().find((x) => x.summary)!
  return (m.parts[0] as { text: string }).text
}

describe('fidelity with the extractive summarizer', () => {
  it('keeps every modified file, the user constraint and the last error in the compacted context', async () => {
    const { session, modified } = plantedSession()
    const r = await compact(session) // the extractive summarizer is the default
    expect(r).toMatchObject({ status: 'compacted', fallback: false })
    // Turns 2–40 were summarized, not kept verbatim.
    const ctxIDs = session.context().map((m) => m.id)
    for (const id of ['u1', 'u2', 'a2', 'u3', 'a20', 'a37', 'a40']) expect(ctxIDs).not.toContain(id)
    expect(ctxIDs).toContain('u45')
    expect(r.tokensAfter!).toBeLessThan(r.tokensBefore / 2)

    const summary = summaryText(session)
    for (const path of modified) expect(section(summary, 'modified-files')!.split('\n')).toContain(path)
    expect(section(summary, 'read-files')!.split('\n')).toEqual(['src/cli.ts'])
    expect(summary).toContain(CONSTRAINT) // verbatim
    expect(summary).toContain(LAST_ERROR)
    expect(summary).toContain(EARLIER_ERROR)
    expect(summary).toContain('Original request: Add a --json flag to the `report` command of the CLI.')
    expect(summary).toContain('Ran: `npx tsc --noEmit`')
    // ...and so does what the model is sent.
    const sent = contextText(session)
    for (const path of modified) expect(sent).toContain(path)
    expect(sent).toContain(JSON.stringify(CONSTRAINT).slice(1, -1))
    expect(sent).toContain(JSON.stringify(LAST_ERROR).slice(1, -1))
  })

  it('is deterministic', async () => {
    const a = plantedSession().session
    const b = plantedSession().session
    await compact(a, { autoContinue: false })
    await compact(b, { autoContinue: false })
    expect(summaryText(a)).toBe(summaryText(b))
  })

  it('updates the previous summary in place: a second compaction still has the constraint and all files', async () => {
    const { session, modified } = plantedSession()
    await compact(session)
    for (let t = 50; t < 70; t++) {
      session.append(user(`u${t}`, `More work ${t}: ${filler(30, `w${t}`)}`))
      session.append(assistant(`a${t}`, [tool('write', { status: 'completed', input: { path: `src/new${t}.ts` }, output: filler(100, `n${t}`) })]))
    }
    const r = await compact(session)
    expect(r.status).toBe('compacted')
    expect(r.plan!.previousSummary).toContain(CONSTRAINT)
    const summary = summaryText(session)
    expect(summary).toContain(CONSTRAINT)
    expect(summary).toContain(LAST_ERROR)
    expect(summary.match(/Original request: Add a --json flag/g)).toHaveLength(1)
    const listed = section(summary, 'modified-files')!.split('\n')
    for (const path of [...modified, 'src/new50.ts']) expect(listed).toContain(path)
    // The first summary's framing is not nested inside the second.
    expect(summary.match(/\[Context summary: reference only\]/g)).toHaveLength(1)
  })
})

describe('partial compaction through compact()', () => {
  it('upTo: summarizes up to and including the message, keeps everything after it', async () => {
    const s = smallSession(8)
    const sum = scripted({ text: '## Goal\n- up to u4' })
    const r = await compact(s, { summarizer: sum, upTo: 'a4', autoContinue: false })
    expect(r.plan!.summarizedIDs).toEqual(['u1', 'a1', 'u2', 'a2', 'u3', 'a3', 'u4', 'a4'])
    const ids = s.context().map((m) => m.id)
    expect(ids.slice(2)).toEqual(['u5', 'a5', 'u6', 'a6', 'u7', 'a7', 'u8', 'a8'])
    const conv = section(sum.calls[0]!.prompt, 'conversation')!
    expect(conv).toContain('Request 4:')
    expect(conv).not.toContain('Request 5:')
  })

  it('from: keeps everything before the message, summarizes from it to the end', async () => {
    const s = smallSession(8)
    const sum = scripted({ text: '## Goal\n- from u6' })
    const r = await compact(s, { summarizer: sum, from: 'u6' })
    expect(r.plan!.summarizedIDs).toEqual(['u6', 'a6', 'u7', 'a7', 'u8', 'a8'])
    const ids = s.context().map((m) => m.id)
    expect(ids.slice(0, 10)).toEqual(['u1', 'a1', 'u2', 'a2', 'u3', 'a3', 'u4', 'a4', 'u5', 'a5'])
    expect(s.context()[11]!.summary).toBe(true)
    expect(ids.at(-1)).toBe(r.messages!.at(-1)!.id) // the continue message
  })

  it('protectFirstTurns keeps the first turns verbatim ahead of the summary', async () => {
    const s = smallSession(8)
    const sum = scripted({ text: '## Goal\n- protected head' })
    const r = await compact(s, { summarizer: sum, protectFirstTurns: 1 })
    expect(r.plan!.summarizedIDs[0]).toBe('u2')
    expect(s.context().map((m) => m.id).slice(0, 2)).toEqual(['u1', 'a1'])
    expect(section(sum.calls[0]!.prompt, 'conversation')).not.toContain('Request 1:')
  })

  it('rejects upTo and from together with the native CF_INVALID_ARGUMENT, session unchanged', async () => {
    const s = smallSession(4)
    const before = snapshot(s)
    await expect(compact(s, { upTo: 'a2', from: 'u3' })).rejects.toMatchObject({ code: 'CF_INVALID_ARGUMENT' })
    expect(snapshot(s)).toEqual(before)
  })

  it('skips when there is nothing to summarize', async () => {
    const s = smallSession(4)
    const first = await compact(s, { autoContinue: false })
    const summaryID = first.messages![1]!.id
    const before = snapshot(s)
    const sum = scripted({ text: 'never' })
    const r = await compact(s, { summarizer: sum, upTo: summaryID })
    expect(r).toMatchObject({ status: 'skipped', reason: 'nothing to summarize', fallback: false })
    expect(sum.calls).toHaveLength(0)
    expect(snapshot(s)).toEqual(before)
  })
})

describe('hooks', () => {
  it('beforeCompact can cancel: skipped with the reason, session unchanged, afterCompact still told', async () => {
    const s = smallSession()
    const before = snapshot(s)
    const sum = scripted({ text: 'never' })
    const seen: string[] = []
    const r = await compact(s, {
      summarizer: sum,
      hooks: {
        beforeCompact: (ctx) => {
          expect(ctx.plan.summarizedIDs.length).toBeGreaterThan(0)
          expect(ctx.prompt).toContain('<conversation>')
          expect(ctx.system).toMatch(/summarization assistant/)
          return { cancel: 'user is mid-review' }
        },
        afterCompact: (res) => {
          seen.push(res.status)
        },
      },
    })
    expect(r).toMatchObject({ status: 'skipped', reason: 'user is mid-review', fallback: false })
    expect(seen).toEqual(['skipped'])
    expect(sum.calls).toHaveLength(0)
    expect(snapshot(s)).toEqual(before)
  })

  it('beforeCompact can replace the prompt (the conversation is still appended) and the system prompt', async () => {
    const s = smallSession()
    const sum = scripted({ text: '## Custom\n- custom summary' })
    const r = await compact(s, {
      summarizer: sum,
      hooks: { beforeCompact: () => ({ prompt: 'CUSTOM PROMPT: list the files only.', system: 'CUSTOM SYSTEM' }) },
    })
    expect(r.status).toBe('compacted')
    const req = sum.calls[0]!
    expect(req.system).toBe('CUSTOM SYSTEM')
    expect(req.prompt.startsWith('CUSTOM PROMPT: list the files only.')).toBe(true)
    expect(req.prompt).toContain('The following is the conversation history:')
    expect(section(req.prompt, 'conversation')).toContain('[User]: Request 1:')
    expect(req.prompt).not.toContain('Create a new anchored summary')
  })

  it('beforeCompact can edit the plan (e.g. leave blocks out of the transcript)', async () => {
    const s = smallSession()
    const sum = scripted({ text: '## Goal\n- edited' })
    await compact(s, {
      summarizer: sum,
      hooks: {
        beforeCompact: ({ plan }) => {
          plan.transcript = plan.transcript.filter((b) => !b.includes('Request 2:'))
        },
      },
    })
    const conv = section(sum.calls[0]!.prompt, 'conversation')!
    expect(conv).toContain('Request 1:')
    expect(conv).not.toContain('Request 2:')
  })

  it('beforeCompact can add context; afterCompact receives the result and the plan', async () => {
    const s = smallSession()
    const sum = scripted({ text: '## Goal\n- with context' })
    let after: { status?: string; planIDs?: number; messages?: number } = {}
    await compact(s, {
      summarizer: sum,
      hooks: {
        beforeCompact: async () => ({ context: ['PROJECT NOTE: the release branch is frozen.'] }),
        afterCompact: async (res, ctx) => {
          after = { status: res.status, planIDs: ctx.plan?.summarizedIDs.length, messages: res.messages?.length }
        },
      },
    })
    expect(sum.calls[0]!.prompt).toContain('PROJECT NOTE: the release branch is frozen.')
    expect(sum.calls[0]!.prompt).toContain('Create a new anchored summary')
    expect(after).toMatchObject({ status: 'compacted', messages: 3 })
    expect(after.planIDs).toBeGreaterThan(0)
  })
})

describe('templates, focus and instructions', () => {
  it('claude-code: asks for an <analysis> scratchpad and stores only the <summary>', async () => {
    const s = smallSession()
    const sum = scripted({
      text: '<analysis>\nScratch: the user wants X. SCRATCHPAD-SECRET\n</analysis>\n\n<summary>\n## 1. Primary Request and Intent\n- port the report\n</summary>',
    })
    const r = await compact(s, { summarizer: sum, template: 'claude-code' })
    expect(sum.calls[0]!.prompt).toContain('<analysis>')
    expect(sum.calls[0]!.prompt).toContain('## 6. All User Messages')
    const body = section(r.summary!, 'context-summary')!
    expect(body).toBe('## 1. Primary Request and Intent\n- port the report')
    expect(r.summary).not.toContain('SCRATCHPAD-SECRET')
  })

  it('an answer that is only a scratchpad is unusable: extractive fallback in the chosen template', async () => {
    const s = smallSession()
    const sum = scripted({ text: '<analysis>thinking, and then the budget ran out' })
    const r = await compact(s, { summarizer: sum, template: 'claude-code' })
    expect(r).toMatchObject({ status: 'compacted', fallback: true, error: { code: 'CF_INVALID_SUMMARY' } })
    expect(r.summary).toContain('## 6. All User Messages')
    expect(r.summary).toContain('Request 1:')
  })

  it('hermes: historical-record sections and rules', async () => {
    const s = smallSession()
    const sum = scripted({ text: '## Historical Task Snapshot\n- x' })
    await compact(s, { summarizer: sum, template: 'hermes' })
    expect(sum.calls[0]!.prompt).toContain('## Completed Actions')
    expect(sum.calls[0]!.prompt).toContain('past tense')
    expect(sum.calls[0]!.template).toBe('hermes')
  })

  it('focus and instructions reach the prompt, escaped so they cannot close its tags', async () => {
    const s = smallSession()
    const sum = scripted({ text: '## Goal\n- focused' })
    await compact(s, { summarizer: sum, focus: 'the JSON writer </focus></instructions>', instructions: 'Mention ticket ABC-12.' })
    const prompt = sum.calls[0]!.prompt
    expect(section(prompt, 'focus')).toBe('the JSON writer &lt;/focus>&lt;/instructions>')
    expect(prompt).toContain('Additional instructions from the user:\nMention ticket ABC-12.')
  })

  it('rejects an unknown template', async () => {
    const s = smallSession()
    await expect(compact(s, { template: 'nope' as 'anchored' })).rejects.toMatchObject({ code: 'CF_INVALID_ARGUMENT' })
  })
})

describe('split turn', () => {
  it('summarizes the history and the turn prefix in parallel and joins them', async () => {
    const s = splitTurnSession()
    let inFlight = 0
    let maxInFlight = 0
    const sum = scripted(async (req) => {
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      await new Promise((r) => setImmediate(r))
      await new Promise((r) => setImmediate(r))
      inFlight--
      return { text: req.kind === 'turn-prefix' ? '## Original Request\n- PREFIX-PART' : '## Goal\n- HISTORY-PART', usage: { input: 10, output: 5 } }
    })
    const r = await compact(s, { summarizer: sum })
    expect(r.plan!.turnPrefix.length).toBeGreaterThan(0)
    expect(r.plan!.transcript.length).toBeGreaterThan(0)
    expect(sum.calls.map((c) => c.kind).sort()).toEqual(['summary', 'turn-prefix'])
    expect(maxInFlight).toBe(2)
    const prefixReq = sum.calls.find((c) => c.kind === 'turn-prefix')!
    const historyReq = sum.calls.find((c) => c.kind === 'summary')!
    expect(section(prefixReq.prompt, 'turn-prefix')).toContain('[User]: Long request: migrate every module to ESM.')
    expect(section(historyReq.prompt, 'conversation')).not.toContain('Long request')
    expect(prefixReq.maxOutputTokens).toBe(Math.ceil(r.plan!.summaryBudget / 2))
    const body = section(r.summary!, 'context-summary')!
    // The latest request is in the summarized turn prefix, and neither part quotes it: the audit restores it.
    expect(body).toBe(
      '## Goal\n- HISTORY-PART\n\n---\n\n**Turn Context (split turn):**\n\n## Original Request\n- PREFIX-PART\n\n' +
        '## Preserved\n(Restored verbatim: facts the summary above had left out.)\n- Latest request: Long request: migrate every module to ESM.',
    )
    expect(s.context().find((m) => m.summary)!.tokens).toMatchObject({ input: 20, output: 10 })
    // The kept tail starts inside the long turn.
    expect(s.context()[2]!.id).toBe(r.plan!.tailStartID)
    expect(r.plan!.tailStartID).toMatch(/^s\d+$/)
  })

  it('a failure of one part aborts the other and falls back', async () => {
    const s = splitTurnSession()
    let historySignal: AbortSignal | undefined
    const sum = scripted(async (req, signal) => {
      if (req.kind === 'turn-prefix') throw Object.assign(new Error('Internal Server Error'), { status: 503 })
      historySignal = signal
      return new Promise<SummaryResponse>((_, reject) => signal!.addEventListener('abort', () => reject(signal!.reason)))
    })
    const r = await compact(s, { summarizer: sum })
    expect(r).toMatchObject({ status: 'compacted', fallback: true, error: { code: 'CF_SERVER' } })
    expect(historySignal?.aborted).toBe(true)
  })
})

describe('after the summary', () => {
  it('autoContinue: false appends only the request and the summary', async () => {
    const s = smallSession()
    const before = s.length
    const r = await compact(s, { summarizer: scripted({ text: 'ok' }), autoContinue: false })
    expect(r.messages).toHaveLength(2)
    expect(s.length).toBe(before + 2)
    expect(s.messages().at(-1)!.summary).toBe(true)
    expect(JSON.stringify(s.messages())).not.toContain(CONTINUE_TEXT)
  })

  it('transcriptPath: the summary says where the full conversation is stored', async () => {
    const s = smallSession()
    const r = await compact(s, { summarizer: scripted({ text: '## Goal\n- x' }), transcriptPath: '/home/me/.agent/sessions/42.jsonl' })
    const tail = r.summary!.slice(r.summary!.lastIndexOf('</modified-files>'))
    expect(tail).toContain('The full conversation before this summary is stored at /home/me/.agent/sessions/42.jsonl')
  })

  it('after an overflow, the continue message starts with the media notice', async () => {
    const s = smallSession()
    const r = await compact(s, { summarizer: scripted({ text: 'ok' }), overflow: true, auto: true })
    const cont = r.messages!.at(-1)!
    expect((cont.parts[0] as { text: string }).text).toBe(`${MEDIA_NOTICE}\n\n${CONTINUE_TEXT}`)
    const part = r.messages![0]!.parts[0] as { type: string; overflow?: boolean; auto: boolean }
    expect(part).toMatchObject({ type: 'compaction', overflow: true, auto: true })
  })

  it('replay: re-creates the rejected user message after the summary, media as text, and hides the original', async () => {
    const s = smallSession(6)
    s.append(
      user('big', [
        text('What is in these screenshots?'),
        { type: 'file', id: 'img1', mime: 'image/png', url: 'data:image/png;base64,AAAA', filename: 'screen.png' },
        { type: 'file', id: 'doc1', mime: 'application/pdf', url: 'data:application/pdf;base64,AAAA' },
        { type: 'file', id: 'txt1', mime: 'text/plain', url: 'data:text/plain;base64,aGk=', filename: 'notes.txt' },
      ], { agent: 'build', model: { providerID: 'p', modelID: 'm' } }),
    )
    s.append(assistant('failed', 'x', { error: { name: 'ContextOverflowError', message: 'prompt is too long' }, finish: 'error' }))
    const sum = scripted({ text: '## Goal\n- before the screenshots' })
    const r = await compact(s, { summarizer: sum, replay: 'big', auto: true })
    expect(r.status).toBe('compacted')
    expect(r.plan!.summarizedIDs).not.toContain('big')
    expect(section(sum.calls[0]!.prompt, 'conversation')).not.toContain('screenshots')
    const replayed = r.messages!.at(-1)!
    expect(replayed.id).not.toBe('big')
    expect(replayed).toMatchObject({ role: 'user', agent: 'build', model: { providerID: 'p', modelID: 'm' } })
    expect(replayed.parts.map((p) => [p.type, (p as { text?: string }).text])).toEqual([
      ['text', 'What is in these screenshots?'],
      ['text', '[Attached image/png: screen.png]'],
      ['text', '[Attached application/pdf: file]'],
      ['file', undefined],
    ])
    const originalIDs = new Set(s.get('big')!.parts.map((p) => p.id))
    for (const p of replayed.parts) expect(originalIDs.has(p.id)).toBe(false)
    const ctx = s.context().map((m) => m.id)
    expect(ctx).not.toContain('big')
    expect(ctx).not.toContain('failed')
    expect(ctx.at(-1)).toBe(replayed.id)
    expect(ctx.slice(0, 2)).toEqual(r.messages!.slice(0, 2).map((m) => m.id))
    expect(ctx).toHaveLength(3)
    // No continue message with a replay; the request records the overflow.
    expect(r.messages).toHaveLength(3)
    expect(JSON.stringify(s.context())).not.toContain(CONTINUE_TEXT)
    expect(r.messages![0]!.parts[0]).toMatchObject({ overflow: true })
    // The model is sent no media at all.
    expect(JSON.stringify(s.toModelMessages())).not.toContain('base64,AAAA')
  })

  it('replay of a message that is not a user message is CF_INVALID_ARGUMENT', async () => {
    const s = smallSession(3)
    await expect(compact(s, { replay: 'a2' })).rejects.toMatchObject({ code: 'CF_INVALID_ARGUMENT' })
    await expect(compact(s, { replay: 'nope' })).rejects.toMatchObject({ code: 'CF_INVALID_ARGUMENT' })
  })
})

describe('aborts leave the session exactly as it was', () => {
  it('aborted after the answer arrived, before it is recorded', async () => {
    const s = smallSession()
    const before = snapshot(s)
    const ac = new AbortController()
    const sum = scripted(async () => {
      ac.abort()
      return { text: '## Goal\n- arrived too late' }
    })
    await expect(compact(s, { summarizer: sum, signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError', code: 'CF_ABORTED' })
    expect(snapshot(s)).toEqual(before)
  })

  it('aborted inside beforeCompact', async () => {
    const s = smallSession()
    const before = snapshot(s)
    const ac = new AbortController()
    const sum = scripted({ text: 'never' })
    await expect(
      compact(s, { summarizer: sum, signal: ac.signal, hooks: { beforeCompact: () => ac.abort() } }),
    ).rejects.toMatchObject({ name: 'AbortError', code: 'CF_ABORTED' })
    expect(sum.calls).toHaveLength(0)
    expect(snapshot(s)).toEqual(before)
  })

  it('a summarizer that ignores its signal cannot hold the abort up', async () => {
    const s = smallSession()
    const before = snapshot(s)
    const ac = new AbortController()
    let release: (v: SummaryResponse) => void = () => {}
    let called: () => void = () => {}
    const calledOnce = new Promise<void>((r) => (called = r))
    const sum = scripted(() => new Promise<SummaryResponse>((r) => ((release = r), called())))
    const pending = compact(s, { summarizer: sum, signal: ac.signal })
    await calledOnce
    ac.abort(new Error('user pressed Esc'))
    await expect(pending).rejects.toMatchObject({ name: 'AbortError', code: 'CF_ABORTED' })
    release({ text: 'late' })
    await new Promise((r) => setImmediate(r))
    expect(snapshot(s)).toEqual(before)
  })

  it('a summarizer throwing an AbortError of its own (its timeout) is a failure, not an abort of compact()', async () => {
    const s = smallSession()
    const before = snapshot(s)
    const timeout = Object.assign(new Error('request timed out'), { name: 'AbortError' })
    const r = await compact(s, { summarizer: scripted(timeout) })
    expect(r).toMatchObject({ status: 'failed', error: { code: 'CF_ABORTED' } })
    expect(snapshot(s)).toEqual(before)
  })
})

describe('concurrency', () => {
  it('a second compaction of the same session while one runs is skipped', async () => {
    const s = smallSession()
    let release: (v: SummaryResponse) => void = () => {}
    let called: () => void = () => {}
    const calledOnce = new Promise<void>((r) => (called = r))
    const slow = scripted(() => new Promise<SummaryResponse>((r) => ((release = r), called())))
    const first = compact(s, { summarizer: slow })
    await calledOnce
    const second = await compact(s, { summarizer: scripted({ text: 'x' }) })
    expect(second).toMatchObject({ status: 'skipped', reason: 'a compaction of this session is already running' })
    release({ text: '## Goal\n- first' })
    expect((await first).status).toBe('compacted')
    expect(s.context().filter((m) => m.summary)).toHaveLength(1)
  })
})

describe('extractive summarizer as a plain summarizer', () => {
  it('needs the plan', async () => {
    await expect(extractiveSummarizer()({ system: '', prompt: 'x', maxOutputTokens: 100 })).rejects.toMatchObject({ code: 'CF_INVALID_ARGUMENT' })
  })

  it('the filterCompacted view of messages() matches context()', async () => {
    const s = smallSession()
    await compact(s)
    expect(filterCompacted(s.messages()).map((m) => m.id)).toEqual(s.context().map((m) => m.id))
  })
})

describe('package entry points', () => {
  it('`contextfold` and `contextfold/effect` resolve to the built ESM entries; the addon is not an entry of its own', () => {
    const root = fileURLToPath(new URL('..', import.meta.url))
    const script = `
      const cf = await import('contextfold')
      const fx = await import('contextfold/effect')
      const internal = await import('contextfold/native').then(() => 'exported', (e) => e.code)
      const ok = typeof cf.compact === 'function' && typeof cf.Session === 'function' && internal === 'ERR_PACKAGE_PATH_NOT_EXPORTED'
        && typeof cf.AutoCompactor === 'function' && typeof fx.layer === 'function' && typeof fx.Compactor === 'function'
      console.log(ok ? 'OK' : 'MISSING')`
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' })
    expect(out.stderr).toBe('')
    expect(out.stdout.trim()).toBe('OK')
  })
})
