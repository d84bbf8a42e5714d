// The AI SDK integration run through real tool loops of one AI SDK major: `generateText` and
// `streamText` through `contextfoldMiddleware`, `generateText` and the agent class through
// `contextfoldPrepareStep`. Shared by the ai v5 / v6 spec (Node 20) and the ai v7 spec (Node 22+).
import { describe, expect, it } from 'vitest'
import { z } from 'zod'

import { contextfoldMiddleware, contextfoldPrepareStep } from '../dist/ai/index.js'
import type { CompactionResult } from '../dist/index.js'
import { PRUNED_MARKER } from '../dist/native.js'
import { UnknownModelError } from '../dist/errors.js'
import { MAX_OUTPUT, REQUEST, STEPS, SYSTEM, WINDOW, scriptedModel, toolOutput, tools, type Major, type Seen } from './ai-loop.js'
import { countingSummarizer } from './scratch.js'


export function integrationSuite(major: Major): void {
  const { ai } = major
  const base = { stopWhen: ai.stepCountIs(STEPS + 5), maxOutputTokens: MAX_OUTPUT, system: SYSTEM, messages: [{ role: 'user', content: REQUEST }] }

  function expectLoop(seen: Seen, text: string, compactions: CompactionResult[], summaries: number): void {
    expect(seen.problems).toEqual([])
    expect(seen.prompts).toHaveLength(STEPS + 1)
    expect(text).toBe('Audit done.')
    // The conversation overflowed the window several times; each compaction summarized once.
    expect(compactions.filter((c) => c.status === 'compacted').length).toBeGreaterThanOrEqual(3)
    expect(summaries).toBe(compactions.length)
    let total = 0
    for (let i = 0; i < STEPS; i++) total += toolOutput(i).split(' word').length - 1
    expect(total).toBeGreaterThan(150_000)
    expect(Math.max(...seen.tokens)).toBeLessThanOrEqual(WINDOW - MAX_OUTPUT)
  }

  /** The scripted model wrapped with the middleware, and what the run records. */
  function wrapped() {
    const seen: Seen = { prompts: [], problems: [], tokens: [] }
    const compactions: CompactionResult[] = []
    const { summarizer, calls } = countingSummarizer()
    const model = ai.wrapLanguageModel({
      model: scriptedModel(major, seen),
      middleware: contextfoldMiddleware({ contextWindow: WINDOW, summarizer, onCompaction: ({ result }) => compactions.push(result) }),
    })
    return { seen, compactions, calls, model }
  }

  describe(`${major.name}: contextfoldMiddleware`, () => {
    it('generateText: a 35-step tool loop with 150k tokens of output runs in a 32k window', async () => {
      const { seen, compactions, calls, model } = wrapped()
      const r = await ai.generateText({ ...base, model, tools: tools(major, z) })
      expectLoop(seen, r.text, compactions, calls())
    })

    it('streamText: the same loop, streamed', async () => {
      const { seen, compactions, calls, model } = wrapped()
      const r = ai.streamText({ ...base, model, tools: tools(major, z) })
      const text = await r.text
      expectLoop(seen, text, compactions, calls())
    })
  })

  describe(`${major.name}: a model the catalog lacks (the mock), no contextWindow given`, () => {
    /** The error a call rejects with. */
    const rejection = (p: Promise<unknown>) => p.then((): Error & { code?: string } => new Error('resolved'), (e: unknown) => e as Error & { code?: string })
    /** The SDK's mock model as it comes (`mock-provider` / `mock-model-id`): it must not be called. */
    const unknownModel = (seen: Seen) =>
      new major.Mock({
        doGenerate: async (options: { prompt: unknown[] }) => {
          seen.prompts.push(options.prompt)
          throw new Error('the model was called')
        },
      })

    it('generateText through the middleware throws our error, naming the option, unwrapped, once', async () => {
      const seen: Seen = { prompts: [], problems: [], tokens: [] }
      // Outside contextfold's middleware: counts the attempts of the SDK's retry helper (maxRetries 2 by default).
      let attempts = 0
      const counter = { specificationVersion: 'v3', middlewareVersion: 'v2', transformParams: async ({ params }: { params: unknown }) => (attempts++, params) }
      const model = ai.wrapLanguageModel({ model: unknownModel(seen), middleware: [counter, contextfoldMiddleware()] as never })
      const e = await rejection(ai.generateText({ model, prompt: REQUEST }))
      expect(e).toBeInstanceOf(UnknownModelError)
      expect(e.code).toBe('CF_UNKNOWN_MODEL')
      expect(e.message).toMatch(/^contextfoldMiddleware: model "mock-model-id" \(provider "mock-provider"\) is not in the model catalog .*; pass its context window: contextfoldMiddleware\(\{ contextWindow \}\)$/)
      expect(attempts).toBe(1)
      expect(seen.prompts).toEqual([])
    })

    it('generateText with the prepareStep helper throws our error, naming its option', async () => {
      const seen: Seen = { prompts: [], problems: [], tokens: [] }
      const e = await rejection(ai.generateText({ model: unknownModel(seen), prompt: REQUEST, prepareStep: contextfoldPrepareStep() }))
      expect(e).toBeInstanceOf(UnknownModelError)
      expect(e.message).toMatch(/; pass its context window: contextfoldPrepareStep\(\{ contextWindow \}\)$/)
      expect(seen.prompts).toEqual([])
    })

    it('a window that is no positive number of tokens is refused when the helper is made', () => {
      const refused = { code: 'CF_INVALID_ARGUMENT', message: 'contextfoldMiddleware: options.contextWindow must be a positive number of tokens, got 0' }
      expect(() => contextfoldMiddleware({ contextWindow: 0 })).toThrow(expect.objectContaining(refused))
      expect(() => contextfoldPrepareStep({ maxOutputTokens: -1 })).toThrow(expect.objectContaining({ code: 'CF_INVALID_ARGUMENT', message: expect.stringMatching(/^contextfoldPrepareStep: options.maxOutputTokens/) }))
    })
  })

  describe(`${major.name}: contextfoldPrepareStep`, () => {
    it('generateText: compacted messages every step after a compaction, summarized once each time', async () => {
      const seen: Seen = { prompts: [], problems: [], tokens: [] }
      const compactions: CompactionResult[] = []
      const { summarizer, calls } = countingSummarizer()
      const toolSet = tools(major, z)
      const prepareStep = contextfoldPrepareStep({
        contextWindow: WINDOW,
        summarizer,
        system: SYSTEM,
        tools: toolSet,
        maxOutputTokens: MAX_OUTPUT,
        onCompaction: ({ result }) => compactions.push(result),
      })
      const r = await ai.generateText({ ...base, model: scriptedModel(major, seen), tools: toolSet, prepareStep })
      expectLoop(seen, r.text, compactions, calls())
    })

    it('puts Anthropic cache breakpoints only where they belong now, even when the loop carries its messages forward', async () => {
      const seen: Seen = { prompts: [], problems: [], tokens: [] }
      const compactions: CompactionResult[] = []
      const { summarizer, calls } = countingSummarizer()
      const toolSet = tools(major, z)
      const prepareStep = contextfoldPrepareStep({ contextWindow: WINDOW, summarizer, system: SYSTEM, tools: toolSet, maxOutputTokens: MAX_OUTPUT, onCompaction: ({ result }) => compactions.push(result) })
      const r = await ai.generateText({ ...base, model: scriptedModel(major, seen, 'anthropic.messages'), tools: toolSet, prepareStep })
      // The loop ran as without breakpoints: compacted a few times, never losing track of the conversation.
      expectLoop(seen, r.text, compactions, calls())
      for (const prompt of seen.prompts as any[][]) {
        const marked = prompt.flatMap((m, i) => (m.providerOptions?.anthropic?.cacheControl ? [i] : []))
        expect(marked.length).toBeLessThanOrEqual(4)
        expect(marked).toContain(prompt.length - 1)
        // No breakpoint of an earlier step is left behind: each is on the end, closes the
        // compaction (its summary, or the latest request it restates right after the summary), or
        // is on the newest output a prune cleared.
        const summary = (k: number) => k >= 0 && JSON.stringify(prompt[k]).includes('context-summary')
        const pruned = prompt.findLastIndex((m) => JSON.stringify(m).includes(PRUNED_MARKER))
        for (const i of marked) expect(i === prompt.length - 1 || summary(i) || (summary(i - 1) && prompt[i].role === 'user') || i === pruned).toBe(true)
      }
    })

    it('the agent class runs the loop with the helper', async () => {
      const seen: Seen = { prompts: [], problems: [], tokens: [] }
      const compactions: CompactionResult[] = []
      const { summarizer, calls } = countingSummarizer()
      const toolSet = tools(major, z)
      const agent = new major.Agent({
        model: scriptedModel(major, seen),
        system: SYSTEM,
        tools: toolSet,
        stopWhen: ai.stepCountIs(STEPS + 5),
        maxOutputTokens: MAX_OUTPUT,
        prepareStep: contextfoldPrepareStep({ contextWindow: WINDOW, summarizer, system: SYSTEM, tools: toolSet, maxOutputTokens: MAX_OUTPUT, onCompaction: ({ result }) => compactions.push(result) }),
      })
      const r = await agent.generate({ messages: base.messages })
      expectLoop(seen, r.text, compactions, calls())
    })
  })
}
