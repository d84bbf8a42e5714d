// contextfold/effect: the compact() pipeline as an Effect service, with tagged errors.
import { Effect, Exit, Fiber } from 'effect'
import { describe, expect, it } from 'vitest'

import { Compactor, compactEffect, layer, make, summarizerFromEffect } from '../dist/effect.js'
import type { Summarizer, SummaryRequest, SummaryResponse } from '../dist/index.js'
import { smallSession, snapshot } from './compact-fixtures.js'

const answer = (text: string): Summarizer => async () => ({ text })
const failing = (status: number, message = `HTTP ${status}`): Summarizer => async () => {
  throw Object.assign(new Error(message), { status })
}

describe('contextfold/effect', () => {
  it('compacts through the Compactor service provided by a layer', async () => {
    const s = smallSession()
    const program = Effect.gen(function* () {
      const compactor = yield* Compactor
      return yield* compactor.compact(s, { focus: 'the report' })
    })
    const result = await Effect.runPromise(program.pipe(Effect.provide(layer({ summarizer: answer('## Goal\n- via Effect') }))))
    expect(result).toMatchObject({ status: 'compacted', fallback: false })
    expect(result.summary).toContain('- via Effect')
    expect(s.context().some((m) => m.summary)).toBe(true)
  })

  it('the compact accessor uses the layer defaults, overridden per call', async () => {
    const s = smallSession()
    const seen: SummaryRequest[] = []
    const recording: Summarizer = async (req) => {
      seen.push(req)
      return { text: '## 1. Primary Request and Intent\n- x' }
    }
    const result = await Effect.runPromise(
      compactEffect(s, { template: 'claude-code', autoContinue: false }).pipe(Effect.provide(layer({ summarizer: recording, template: 'hermes' }))),
    )
    expect(seen[0]!.template).toBe('claude-code')
    expect(result.messages).toHaveLength(2)
  })

  it('a fallback summary is a success with fallback: true', async () => {
    const s = smallSession()
    const result = await Effect.runPromise(make({ summarizer: failing(500) }).compact(s))
    expect(result).toMatchObject({ status: 'compacted', fallback: true })
  })

  it.each([
    [401, 'AuthFailed'],
    [429, 'RateLimited'],
  ] as const)('HTTP %i fails with the tagged error %s, session unchanged', async (status, tag) => {
    const s = smallSession()
    const before = snapshot(s)
    const error = await Effect.runPromise(Effect.flip(make({ summarizer: failing(status) }).compact(s)))
    expect(error._tag).toBe(tag)
    expect(error.code).toBe(status === 401 ? 'CF_AUTH' : 'CF_RATE_LIMITED')
    expect(error.message).toContain(`HTTP ${status}`)
    expect(snapshot(s)).toEqual(before)
  })

  it('network errors are NetworkFailed; catchTag recovers', async () => {
    const s = smallSession()
    const network: Summarizer = async () => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) })
    }
    const out = await Effect.runPromise(
      make({ summarizer: network })
        .compact(s)
        .pipe(
          Effect.map((r) => r.status as string),
          Effect.catchTag('NetworkFailed', (e) => Effect.succeed(`recovered: ${e._tag} ${e.code}`)),
        ),
    )
    expect(out).toBe('recovered: NetworkFailed CF_NETWORK')
  })

  it('with fallback: false, an unusable answer is SummaryFailed with its code', async () => {
    const s = smallSession()
    const cut: Summarizer = async () => ({ text: 'half', finishReason: 'length' })
    const error = await Effect.runPromise(Effect.flip(make({ summarizer: cut, fallback: false }).compact(s)))
    expect(error).toMatchObject({ _tag: 'SummaryFailed', code: 'CF_INVALID_SUMMARY' })
  })

  it('bad options are InvalidArgument', async () => {
    const s = smallSession()
    const error = await Effect.runPromise(Effect.flip(make().compact(s, { upTo: 'a1', from: 'u2' })))
    expect(error).toMatchObject({ _tag: 'InvalidArgument', code: 'CF_INVALID_ARGUMENT' })
  })

  it('an aborted options.signal fails with Aborted', async () => {
    const s = smallSession()
    const error = await Effect.runPromise(Effect.flip(make({ summarizer: answer('x') }).compact(s, { signal: AbortSignal.abort() })))
    expect(error._tag).toBe('Aborted')
  })

  it('interrupting the fiber aborts the summarizer call and leaves the session unchanged', async () => {
    const s = smallSession()
    const before = snapshot(s)
    let signalSeen: AbortSignal | undefined
    let started: () => void = () => {}
    const startedP = new Promise<void>((r) => (started = r))
    const hanging: Summarizer = (_req, signal) => {
      signalSeen = signal
      started()
      return new Promise<SummaryResponse>(() => {})
    }
    const fiber = Effect.runFork(make({ summarizer: hanging }).compact(s))
    await startedP
    const exit = await Effect.runPromise(Fiber.interrupt(fiber).pipe(Effect.flatMap(() => Fiber.await(fiber))))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(signalSeen?.aborted).toBe(true)
    expect(snapshot(s)).toEqual(before)
  })

  it('summarizerFromEffect runs an Effect summarizer', async () => {
    const s = smallSession()
    const fx = summarizerFromEffect((req) => Effect.succeed({ text: `## Goal\n- effect summarizer, budget ${req.maxOutputTokens}` }))
    const result = await Effect.runPromise(make({ summarizer: fx }).compact(s))
    expect(result.summary).toContain(`budget ${result.plan!.summaryBudget}`)
  })
})
