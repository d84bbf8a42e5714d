// Tool outputs near or over the window, through real AI SDK loops: the newest result reaches the
// model on the call right after it arrives (whole when it fits beside a summary, else cut to fit,
// head and tail, with a warning), and no prompt is over the window. Shared by the ai v5 / v6 spec.
import { describe, expect, it } from 'vitest'
import { z } from 'zod'

import { contextfoldMiddleware, contextfoldPrepareStep, type ContextfoldAiOptions } from '../dist/ai/index.js'
import { extractiveSummarizer, type CompactionResult } from '../dist/index.js'
import { MAX_OUTPUT, REQUEST, SYSTEM, WINDOW, scriptedModel, tools, type Major, type Seen } from './ai-loop.js'

/** `tokens` o200k tokens of one step's output, its head and its tail named by the step. */
function output(tokens: number): (step: number) => string {
  return (step) => `head of step ${step}:` + ' word'.repeat(tokens) + ` tail of step ${step}.`
}

/** The text of a prompt's last tool result. */
function lastResult(prompt: any[]): string {
  const tool = [...prompt].reverse().find((m) => m.role === 'tool')
  return JSON.stringify(tool?.content ?? '')
}

export function largeOutputSuite(major: Major): void {
  const { ai } = major
  const STEPS = 8

  async function run(outputTokens: number, how: 'middleware' | 'prepareStep', extra: Partial<ContextfoldAiOptions> = {}) {
    const seen: Seen = { prompts: [], problems: [], tokens: [] }
    const compactions: CompactionResult[] = []
    const warnings: string[] = []
    const toolSet = tools(major, z, output(outputTokens))
    const options: ContextfoldAiOptions = {
      contextWindow: WINDOW,
      maxOutputTokens: MAX_OUTPUT,
      summarizer: extractiveSummarizer(),
      onCompaction: ({ result }) => compactions.push(result),
      onWarning: ({ warning }) => warnings.push(warning.message),
      ...extra,
    }
    const scripted = scriptedModel(major, seen, 'mock', STEPS)
    const common = { stopWhen: ai.stepCountIs(STEPS + 2), maxOutputTokens: MAX_OUTPUT, system: SYSTEM, messages: [{ role: 'user', content: REQUEST }], tools: toolSet }
    const r =
      how === 'middleware'
        ? await ai.generateText({ ...common, model: ai.wrapLanguageModel({ model: scripted, middleware: contextfoldMiddleware(options) }) })
        : await ai.generateText({ ...common, model: scripted, prepareStep: contextfoldPrepareStep({ ...options, system: SYSTEM, tools: toolSet }) })
    expect(r.text).toBe('Audit done.')
    expect(seen.prompts).toHaveLength(STEPS + 1)
    return { seen, compactions, warnings }
  }

  for (const how of ['middleware', 'prepareStep'] as const) {
    describe(`${major.name}: tool outputs near or over the window (${how})`, () => {
      it('an 18k-token output in a 32k window reaches the model whole on the next call, every step', async () => {
        const { seen, compactions, warnings } = await run(18_000, how)
        expect(seen.problems).toEqual([])
        for (let n = 1; n < seen.prompts.length; n++) expect(lastResult(seen.prompts[n]!)).toContain(JSON.stringify(output(18_000)(n - 1)).slice(1, -1))
        // Each result was read before a compaction summarized it.
        expect(compactions.filter((c) => c.status === 'compacted').length).toBeGreaterThanOrEqual(STEPS - 2)
        expect(warnings.filter((w) => w.includes('cut to fit'))).toEqual([])
      })

      it('a 39k-token output, larger than the window, reaches the model cut to fit (head and tail), with a warning', async () => {
        const { seen, warnings } = await run(39_000, how)
        expect(seen.problems).toEqual([])
        for (let n = 1; n < seen.prompts.length; n++) {
          const text = lastResult(seen.prompts[n]!)
          expect(text).toContain(`head of step ${n - 1}:`)
          expect(text).toContain(`tail of step ${n - 1}.`)
          expect(text).toMatch(/\[\.\.\. omitted \d+ chars \.\.\.\]/)
        }
        expect(warnings.filter((w) => w.includes('cut to fit')).length).toBe(STEPS)
      })

      it('toolOutputMaxChars cuts the newest output in the call it arrives in, not after the next compaction', async () => {
        // 122k characters (about 24k tokens): 20,000 of them reach the model, head and tail.
        const { seen } = await run(24_400, how, { compaction: { toolOutputMaxChars: 20_000 } })
        expect(seen.problems).toEqual([])
        for (let n = 1; n < seen.prompts.length; n++) {
          const text = lastResult(seen.prompts[n]!)
          expect(text).toContain(`head of step ${n - 1}:`)
          expect(text).toContain(`tail of step ${n - 1}.`)
          expect(text).toContain('[... omitted 102')
        }
        expect(Math.max(...seen.tokens)).toBeLessThanOrEqual(WINDOW - MAX_OUTPUT)
      })
    })
  }
}
