// aiSdkSummarizer from `contextfold/ai` calls the app's own `ai`: the `generateText` passed in, or
// the `ai` package found from the app's folder (here temp folders whose node_modules/ai is ai v5 or
// v6), never contextfold's own copy. A model the app's `ai` cannot call is a coded error, not a
// silent extractive fallback.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { MockLanguageModelV2 } from 'ai/test'
import { MockLanguageModelV3 } from 'ai-v6/test'
import { afterAll, describe, expect, it } from 'vitest'

import { aiSdkSummarizer } from '../dist/ai/index.js'
import { compact } from '../dist/index.js'
import { smallSession, snapshot } from './compact-fixtures.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

/** An app folder whose `node_modules/ai` is the given installed package (ai v5: `ai`, v6: `ai-v6`). */
function app(pkg: string | undefined): string {
  const dir = mkdtempSync(join(tmpdir(), 'contextfold-app-'))
  dirs.push(dir)
  const nested = join(dir, 'src', 'routes')
  mkdirSync(nested, { recursive: true })
  if (pkg) {
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(join(ROOT, 'node_modules', pkg), join(dir, 'node_modules', 'ai'), 'dir')
  }
  return nested
}

const v3Result = (text: string) => ({
  content: [{ type: 'text' as const, text }],
  finishReason: { unified: 'stop' as const, raw: 'end_turn' },
  usage: { inputTokens: { total: 300, noCache: 200, cacheRead: 100, cacheWrite: 0 }, outputTokens: { total: 30, text: 30, reasoning: 0 } },
  warnings: [],
})

describe('aiSdkSummarizer with the app`s ai', () => {
  it('finds ai v6 from the app`s folder (not contextfold`s ai v5) and calls a v6 model', async () => {
    const model = new MockLanguageModelV3({ provider: 'mock-v6', modelId: 'm6', doGenerate: async () => v3Result('## Goal\n- from ai v6') })
    const s = smallSession()
    const r = await compact(s, { summarizer: aiSdkSummarizer(model, { from: app('ai-v6'), maxRetries: 0 }) })
    expect(r).toMatchObject({ status: 'compacted', fallback: false })
    expect(r.summary).toContain('- from ai v6')
    expect(model.doGenerateCalls).toHaveLength(1)
    expect(s.context().find((m) => m.summary)!.tokens).toMatchObject({ input: 200, output: 30, cacheRead: 100, total: 330 })
  })

  it('a model of another ai major is CF_UNSUPPORTED_MODEL, with the session unchanged and no fallback', async () => {
    const model = new MockLanguageModelV3({ doGenerate: async () => v3Result('never') })
    const s = smallSession()
    const before = snapshot(s)
    const r = await compact(s, { summarizer: aiSdkSummarizer(model, { from: app('ai'), maxRetries: 0 }) })
    expect(r).toMatchObject({ status: 'failed', fallback: false, error: { code: 'CF_UNSUPPORTED_MODEL' } })
    expect(r.reason).toMatch(/cannot call a v3 model/)
    expect(snapshot(s)).toEqual(before)
  })

  it('an app without ai is CF_UNSUPPORTED_MODEL naming what to install', async () => {
    const s = smallSession()
    const r = await compact(s, { summarizer: aiSdkSummarizer('openai/gpt-5-mini', { from: app(undefined) }) })
    expect(r).toMatchObject({ status: 'failed', error: { code: 'CF_UNSUPPORTED_MODEL' } })
    expect(r.reason).toMatch(/npm install ai|generateText/)
  })

  it('defaults to the working directory: the clone`s own ai v5 runs a v2 model', async () => {
    const model = new MockLanguageModelV2({
      doGenerate: async () => ({ content: [{ type: 'text', text: '## Goal\n- v5' }], finishReason: 'stop', usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12 }, warnings: [] }),
    })
    expect(process.cwd()).toBe(ROOT)
    const r = await compact(smallSession(), { summarizer: aiSdkSummarizer(model, { maxRetries: 0 }) })
    expect(r).toMatchObject({ status: 'compacted', fallback: false })
  })
})
