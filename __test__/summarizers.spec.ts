// The summarizers: OpenAI-compatible (real HTTP server), AI SDK (MockLanguageModelV2, ai v5), extractive;
// and the error classification compact() relies on.
import { APICallError } from 'ai'
import { MockLanguageModelV2 } from 'ai/test'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'

import { aiSdkSummarizer } from '../dist/ai/index.js'
import { piModelSummarizer } from '../dist/pi/index.js'
import { compact, openAICompatibleSummarizer } from '../dist/index.js'
import { TEMPLATES } from '../dist/templates.js'
import { classifyError } from '../dist/errors.js'
import { estimateTokens, usageFromProvider } from '../dist/native.js'
import { extractiveSummary, parseSections } from '../dist/summarizers/extractive.js'
import type { CompactionPlan, SummaryRequest } from '../dist/index.js'
import { plantedSession, smallSession, snapshot, CONSTRAINT, LAST_ERROR } from './compact-fixtures.js'
import { FakeOpenAI } from './fake-openai.js'

const server = new FakeOpenAI()
beforeAll(() => server.start())
afterAll(() => server.close())
beforeEach(() => server.reset())

const REQ: SummaryRequest = { system: 'SYS', prompt: 'PROMPT', maxOutputTokens: 1234 }

describe('openAICompatibleSummarizer', () => {
  it('sends a chat completion and maps the answer, usage and model', async () => {
    const s = openAICompatibleSummarizer({
      baseURL: `${server.baseURL}/`,
      apiKey: 'k1',
      model: 'gpt-x',
      headers: { 'x-session-affinity': 'abc' },
      temperature: 0.2,
      body: { reasoning_effort: 'low' },
      providerID: 'openrouter',
    })
    server.script({
      text: 'the summary',
      finish: 'stop',
      model: 'gpt-x-2025',
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, prompt_tokens_details: { cached_tokens: 64 }, completion_tokens_details: { reasoning_tokens: 5 } },
    })
    const out = await s(REQ)
    expect(out).toEqual({
      text: 'the summary',
      finishReason: 'stop',
      // prompt_tokens (100) include the 64 read from the cache: counted once.
      usage: { input: 36, output: 20, total: 120, cacheRead: 64, reasoning: 5 },
      model: { providerID: 'openrouter', modelID: 'gpt-x-2025' },
    })
    const req = server.requests[0]!
    expect(req.path).toBe('/v1/chat/completions')
    expect(req.headers.authorization).toBe('Bearer k1')
    expect(req.headers['x-session-affinity']).toBe('abc')
    expect(req.body).toMatchObject({
      model: 'gpt-x',
      messages: [
        { role: 'system', content: 'SYS' },
        { role: 'user', content: 'PROMPT' },
      ],
      max_tokens: 1234,
      stream: false,
      temperature: 0.2,
      reasoning_effort: 'low',
    })
  })

  it('uses max_completion_tokens when told, and no Authorization without a key', async () => {
    const s = openAICompatibleSummarizer({ baseURL: server.baseURL, model: 'o-model', maxTokensField: 'max_completion_tokens' })
    await s(REQ)
    const req = server.requests[0]!
    expect(req.body.max_completion_tokens).toBe(1234)
    expect(req.body.max_tokens).toBeUndefined()
    expect(req.headers.authorization).toBeUndefined()
  })

  it('reads array content parts, through an injected fetch', async () => {
    const urls: string[] = []
    const fetchParts: typeof fetch = async (url) => {
      urls.push(String(url))
      const body = { choices: [{ message: { content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }, finish_reason: 'stop' }] }
      return new Response(JSON.stringify(body), { status: 200 })
    }
    const out = await openAICompatibleSummarizer({ baseURL: 'http://127.0.0.1:9/v1//', model: 'm', fetch: fetchParts })(REQ)
    expect(out.text).toBe('ab')
    expect(urls).toEqual(['http://127.0.0.1:9/v1/chat/completions'])
  })

  it.each([
    [401, { error: { message: 'invalid key' } }, 'CF_AUTH', 'AuthError'],
    [403, { error: { message: 'forbidden' } }, 'CF_AUTH', 'AuthError'],
    [429, { error: { message: 'slow down' } }, 'CF_RATE_LIMITED', 'RateLimitError'],
    [500, 'oops', 'CF_SERVER', 'ServerError'],
    [503, { error: { message: 'overloaded' } }, 'CF_SERVER', 'ServerError'],
    [400, { error: { message: "This model's maximum context length is 128000 tokens.", code: 'context_length_exceeded' } }, 'CF_PROMPT_TOO_LONG', 'PromptTooLongError'],
    [400, { error: { message: 'prompt is too long: 210000 tokens > 200000 maximum' } }, 'CF_PROMPT_TOO_LONG', 'PromptTooLongError'],
    [413, 'Payload Too Large', 'CF_PROMPT_TOO_LONG', 'PromptTooLongError'],
    [400, { error: { message: 'unknown parameter: foo' } }, 'CF_SUMMARY_FAILED', 'SummaryFailedError'],
    [404, { error: { message: 'model not found' } }, 'CF_SUMMARY_FAILED', 'SummaryFailedError'],
  ] as const)('HTTP %i → %s', async (status, body, code, name) => {
    const s = openAICompatibleSummarizer({ baseURL: server.baseURL, model: 'm' })
    server.script({ status, body })
    const err = await s(REQ).then(
      () => undefined,
      (e: unknown) => e as Error & { code: string; status: number },
    )
    expect(err).toBeInstanceOf(Error)
    expect(err).toMatchObject({ code, name, status })
    expect(err!.message).toContain(`HTTP ${status}`)
  })

  it('an error object in a 200 answer is an error too', async () => {
    const fetch200: typeof fetch = async () => new Response(JSON.stringify({ error: { message: 'upstream failed', code: 502 } }), { status: 200 })
    await expect(openAICompatibleSummarizer({ baseURL: 'http://x/v1', model: 'm', fetch: fetch200 })(REQ)).rejects.toMatchObject({ code: 'CF_SERVER', status: 502 })
  })

  it('a non-JSON answer is CF_SUMMARY_FAILED (fallback-eligible)', async () => {
    const fetchHTML: typeof fetch = async () => new Response('<html>gateway</html>', { status: 200 })
    await expect(openAICompatibleSummarizer({ baseURL: 'http://x/v1', model: 'm', fetch: fetchHTML })(REQ)).rejects.toMatchObject({ code: 'CF_SUMMARY_FAILED' })
  })

  it('aborts the HTTP request with its signal', async () => {
    const s = openAICompatibleSummarizer({ baseURL: server.baseURL, model: 'm' })
    server.script({ hang: true })
    const ac = new AbortController()
    const pending = s(REQ, ac.signal)
    const req = await server.request(0)
    ac.abort()
    await expect(pending).rejects.toMatchObject({ name: 'AbortError', code: 'CF_ABORTED' })
    await req.closedEarly
  })
})

describe('aiSdkSummarizer (ai v5, MockLanguageModelV2)', () => {
  const ok = (textOut: string, finishReason: 'stop' | 'length' = 'stop') => ({
    content: [{ type: 'text' as const, text: textOut }],
    finishReason,
    usage: { inputTokens: 300, outputTokens: 30, totalTokens: 330, cachedInputTokens: 100 },
    warnings: [],
  })

  it('calls generateText with system, prompt and maxOutputTokens and maps the result', async () => {
    const model = new MockLanguageModelV2({ provider: 'mock-provider', modelId: 'mock-model', doGenerate: async () => ok('## Goal\n- from the AI SDK') })
    const s = smallSession()
    const r = await compact(s, { summarizer: aiSdkSummarizer(model, { maxRetries: 0 }) })
    expect(r).toMatchObject({ status: 'compacted', fallback: false })
    expect(r.summary).toContain('- from the AI SDK')
    const call = model.doGenerateCalls[0]!
    expect(call.maxOutputTokens).toBe(r.plan!.summaryBudget)
    expect(call.prompt[0]).toMatchObject({ role: 'system' })
    expect(JSON.stringify(call.prompt[0])).toContain('summarization assistant')
    expect(JSON.stringify(call.prompt[1])).toContain('<conversation>')
    const summary = s.context().find((m) => m.summary)!
    // inputTokens (300) includes the 100 read from the cache: counted once.
    expect(summary.tokens).toEqual({ input: 200, output: 30, total: 330, cacheRead: 100 })
    expect(summary.model).toMatchObject({ providerID: 'mock-provider' })
  })

  it('a summary cut off at the budget (finishReason "length") falls back', async () => {
    const model = new MockLanguageModelV2({ doGenerate: async () => ok('## Goal\n- cut', 'length') })
    const r = await compact(smallSession(), { summarizer: aiSdkSummarizer(model, { maxRetries: 0 }) })
    expect(r).toMatchObject({ status: 'compacted', fallback: true, error: { code: 'CF_INVALID_SUMMARY' } })
  })

  it("an APICallError 401 is an auth failure: session unchanged", async () => {
    const model = new MockLanguageModelV2({
      doGenerate: async () => {
        throw new APICallError({ message: 'Unauthorized', url: 'https://api.example/v1', requestBodyValues: {}, statusCode: 401, responseBody: '{"error":"bad key"}', isRetryable: false })
      },
    })
    const s = smallSession()
    const before = snapshot(s)
    const r = await compact(s, { summarizer: aiSdkSummarizer(model, { maxRetries: 0 }) })
    expect(r).toMatchObject({ status: 'failed', error: { code: 'CF_AUTH', status: 401 } })
    expect(snapshot(s)).toEqual(before)
  })

  it('an APICallError 400 "context length" shrinks and retries', async () => {
    let calls = 0
    const model = new MockLanguageModelV2({
      doGenerate: async () => {
        if (++calls === 1) {
          throw new APICallError({ message: "This model's maximum context length is 8192 tokens", url: 'u', requestBodyValues: {}, statusCode: 400, isRetryable: false })
        }
        return ok('## Goal\n- second try')
      },
    })
    const r = await compact(smallSession(12), { summarizer: aiSdkSummarizer(model, { maxRetries: 0 }) })
    expect(r).toMatchObject({ status: 'compacted', fallback: false })
    const [first, second] = model.doGenerateCalls.map((c) => JSON.stringify(c.prompt).length)
    expect(second!).toBeLessThan(first!)
  })

  it('passes the abort signal: an abort rejects compact() with AbortError', async () => {
    const model = new MockLanguageModelV2({
      doGenerate: (options) =>
        new Promise((_, reject) => {
          options.abortSignal?.addEventListener('abort', () => reject(options.abortSignal!.reason))
        }),
    })
    const s = smallSession()
    const before = snapshot(s)
    const ac = new AbortController()
    const pending = compact(s, { summarizer: aiSdkSummarizer(model, { maxRetries: 0 }), signal: ac.signal })
    while (model.doGenerateCalls.length === 0) await new Promise((r) => setImmediate(r))
    expect(model.doGenerateCalls[0]!.abortSignal).toBeDefined()
    ac.abort()
    await expect(pending).rejects.toMatchObject({ name: 'AbortError', code: 'CF_ABORTED' })
    expect(snapshot(s)).toEqual(before)
  })

  it('accepts an injected generateText', async () => {
    const seen: Array<Record<string, unknown>> = []
    const s = aiSdkSummarizer('gateway/model-id', {
      generateText: async (o) => {
        seen.push(o)
        return { text: 'x', finishReason: 'stop', usage: { inputTokens: 10, outputTokens: 2, inputTokenDetails: { noCacheTokens: 3, cacheReadTokens: 3, cacheWriteTokens: 4 }, outputTokenDetails: { reasoningTokens: 5 } } }
      },
      settings: { seed: 7 },
    })
    const out = await s(REQ)
    expect(seen[0]).toMatchObject({ model: 'gateway/model-id', system: 'SYS', prompt: 'PROMPT', maxOutputTokens: 1234, seed: 7 })
    expect(out).toEqual({ text: 'x', finishReason: 'stop', usage: { input: 3, output: 2, cacheRead: 3, cacheWrite: 4, reasoning: 5, total: 12 }, model: { providerID: 'ai-sdk', modelID: 'gateway/model-id' } })
  })
})

describe('usageFromProvider: one mapping for every usage shape', () => {
  it('counts cached input once, in every AI SDK major and provider shape', () => {
    // v5: inputTokens includes the cached ones.
    expect(usageFromProvider({ inputTokens: 10, outputTokens: 2, totalTokens: 12, reasoningTokens: 1, cachedInputTokens: 4 })).toEqual({ input: 6, output: 2, total: 12, reasoning: 1, cacheRead: 4 })
    // v6 / v7 step usage.
    expect(
      usageFromProvider({ inputTokens: 100, inputTokenDetails: { noCacheTokens: 90, cacheReadTokens: 10, cacheWriteTokens: 0 }, outputTokens: 20, outputTokenDetails: { textTokens: 18, reasoningTokens: 2 }, totalTokens: 120 }),
    ).toEqual({ input: 90, output: 20, total: 120, reasoning: 2, cacheRead: 10 })
    // The provider specification's nested usage (LanguageModelV3 / V4).
    expect(usageFromProvider({ inputTokens: { total: 100, noCache: 90, cacheRead: 10, cacheWrite: 0 }, outputTokens: { total: 20, text: 18, reasoning: 2 } })).toEqual({ input: 90, output: 20, total: 120, reasoning: 2, cacheRead: 10 })
    // Anthropic's input_tokens leave the cache out.
    expect(usageFromProvider({ input_tokens: 50, output_tokens: 5, cache_read_input_tokens: 40, cache_creation_input_tokens: 10 })).toEqual({ input: 50, output: 5, cacheRead: 40, cacheWrite: 10, total: 105 })
    expect(usageFromProvider({ inputTokens: 10, outputTokens: undefined })).toEqual({ input: 10, output: 0, total: 10 })
    expect(usageFromProvider({})).toBeUndefined()
    expect(usageFromProvider(undefined)).toBeUndefined()
  })

  it("reads pi-ai's usage, and a step's Anthropic report in its provider metadata first", () => {
    // pi-ai: `input` leaves the cache out; zeros are no report.
    const pi = { input: 150, output: 30, cacheRead: 100, cacheWrite: 0, totalTokens: 280, cost: { total: 0.01 } }
    expect(usageFromProvider(pi)).toEqual({ input: 150, output: 30, cacheRead: 100, total: 280 })
    expect(usageFromProvider({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 })).toBeUndefined()
    // ai v5's Anthropic provider: cache writes only in its own report.
    const usage = { inputTokens: 250, outputTokens: 30, cachedInputTokens: 100 }
    const providerMetadata = { anthropic: { usage: { input_tokens: 150, output_tokens: 30, cache_read_input_tokens: 100, cache_creation_input_tokens: 50 } } }
    expect(usageFromProvider(usage, providerMetadata)).toEqual({ input: 150, output: 30, cacheRead: 100, cacheWrite: 50, total: 330 })
    expect(usageFromProvider(usage, { openai: {} })).toEqual(usageFromProvider(usage))
    expect(usageFromProvider(usage, undefined)).toEqual({ input: 150, output: 30, cacheRead: 100, total: 280 })
  })

  it("pi's summarizer records pi-ai's usage through the same mapping", async () => {
    const usage = { input: 150, output: 30, cacheRead: 100, cacheWrite: 0, totalTokens: 280 }
    const answer = (u: typeof usage) => async () => ({ role: 'assistant', content: [{ type: 'text', text: 'S' }], stopReason: 'stop', usage: u })
    const ctx = { model: { provider: 'anthropic', id: 'claude-test' } } as never
    const req = { system: 'sys', prompt: 'p', maxOutputTokens: 100 } as never
    const out = await piModelSummarizer(ctx, answer(usage) as never)(req, new AbortController().signal)
    expect(out).toEqual({ text: 'S', finishReason: 'stop', model: { providerID: 'anthropic', modelID: 'claude-test' }, usage: usageFromProvider(usage) })
    const none = await piModelSummarizer(ctx, answer({ ...usage, input: 0, output: 0, cacheRead: 0 }) as never)(req, new AbortController().signal)
    expect(none.usage).toBeUndefined()
  })

  it('gives the summarizers what the importers record for the same OpenAI response', async () => {
    const usage = { prompt_tokens: 300, completion_tokens: 30, total_tokens: 330, prompt_tokens_details: { cached_tokens: 100 } }
    const { importTranscript } = await import('../dist/index.js')
    const chat = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello', extra: { response: { usage, model: 'gpt-4o' } } },
    ]
    const imported = importTranscript({ text: JSON.stringify(chat) }, { format: 'openai-chat' }).messages.find((m) => m.role === 'assistant')
    expect(imported?.tokens).toEqual(usageFromProvider(usage))
    expect(usageFromProvider(usage)).toEqual({ input: 200, output: 30, cacheRead: 100, total: 330 })
  })
})

describe('classifyError', () => {
  it.each([
    [Object.assign(new Error('Failed after 3 attempts'), { name: 'AI_RetryError', lastError: Object.assign(new Error('Unauthorized'), { statusCode: 401 }) }), 'CF_AUTH'],
    [new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) }), 'CF_NETWORK'],
    [Object.assign(new Error('getaddrinfo ENOTFOUND api.example'), { code: 'ENOTFOUND' }), 'CF_NETWORK'],
    [Object.assign(new Error('Bad Request'), { status: 400, body: '{"error":{"message":"Input is too long for requested model."}}' }), 'CF_PROMPT_TOO_LONG'],
    [new Error('prompt is too long: 201000 tokens > 200000 maximum'), 'CF_PROMPT_TOO_LONG'],
    [Object.assign(new Error('Service Unavailable'), { response: { status: 503 } }), 'CF_SERVER'],
    [Object.assign(new Error('Too Many Requests'), { statusCode: 429 }), 'CF_RATE_LIMITED'],
    [new DOMException('This operation was aborted', 'AbortError'), 'CF_ABORTED'],
    [new Error('something odd'), 'CF_SUMMARY_FAILED'],
    ['a string', 'CF_SUMMARY_FAILED'],
  ])('%s → %s', (e, code) => {
    expect(classifyError(e).code).toBe(code)
  })

  it('fallback is allowed only for errors about the summary itself', () => {
    expect(classifyError(Object.assign(new Error('x'), { status: 500 })).fallbackAllowed).toBe(true)
    expect(classifyError(new Error('prompt is too long')).fallbackAllowed).toBe(true)
    expect(classifyError(Object.assign(new Error('x'), { status: 401 })).fallbackAllowed).toBe(false)
    expect(classifyError(Object.assign(new Error('x'), { code: 'ECONNRESET' })).fallbackAllowed).toBe(false)
  })
})

describe('extractive summary', () => {
  function planOf(): CompactionPlan {
    const { session } = plantedSession()
    return session.prepareCompaction()!
  }

  it.each(Object.keys(TEMPLATES) as Array<keyof typeof TEMPLATES>)('fills every section of the %s template', (name) => {
    const plan = planOf()
    const out = extractiveSummary(plan, { template: name })
    const headings = out.split('\n').filter((l) => l.startsWith('#'))
    expect(headings).toEqual(TEMPLATES[name].sections.map((s) => s.heading))
    expect(out).toContain(CONSTRAINT)
    expect(out).toContain(LAST_ERROR)
    expect(extractiveSummary(plan, { template: name })).toBe(out)
  })

  it('over its budget, leaves out the least referenced items first and keeps the facts', () => {
    const { session } = plantedSession()
    // Many one-off commands, and one file the conversation keeps coming back to.
    for (let i = 0; i < 40; i++) {
      session.append({ id: `uc${i}`, role: 'user', parts: [{ type: 'text', id: `uct${i}`, text: `Check step ${i} in src/hot/ledger.ts again.` }] })
      session.append({
        id: `ac${i}`,
        role: 'assistant',
        parts: [
          { type: 'tool', id: `act${i}`, callID: `cc${i}`, tool: 'bash', state: { status: 'completed', input: { command: `tool${i} --flag value${i}` }, output: 'ok' } },
          { type: 'text', id: `acx${i}`, text: 'Checked src/hot/ledger.ts.' },
        ],
      })
    }
    session.append({ id: 'uz', role: 'user', parts: [{ type: 'text', id: 'uzt', text: 'Keep going.' }] })
    const plan = session.prepareCompaction({ upTo: 'ac39' })!
    const full = extractiveSummary(plan)
    const small = extractiveSummary({ ...plan, summaryBudget: Math.floor(estimateTokens(full) * 0.6) })
    expect(estimateTokens(small)).toBeLessThan(estimateTokens(full))
    expect(small).toMatch(/less referenced items left out to fit the summary budget/)
    expect(small).toContain('src/hot/ledger.ts')
    expect(small).toContain(CONSTRAINT)
    expect(small).toContain(LAST_ERROR)
  })

  it('quotes only the user messages that state a constraint or preference under Constraints', () => {
    const plan = planOf()
    const sections = parseSections(extractiveSummary(plan))
    const constraints = sections.get('constraints preferences')!
    expect(constraints).toEqual([CONSTRAINT])
    expect(sections.get('goal')![0]).toBe('Original request: Add a --json flag to the `report` command of the CLI.')
    expect(sections.get('critical context')!.some((i) => i.startsWith(`Last error (unresolved): ${LAST_ERROR}`))).toBe(true)
  })

  it('lists the commands run and the tool calls left open', () => {
    const { session } = plantedSession()
    session.append({ id: 'uo', role: 'user', parts: [{ type: 'text', id: 'uot', text: 'Deploy it.' }] })
    session.append({
      id: 'ao',
      role: 'assistant',
      parts: [{ type: 'tool', id: 'aot', callID: 'co', tool: 'bash', state: { status: 'running', input: { command: 'npm run deploy' } } }],
    })
    for (let t = 0; t < 6; t++) {
      session.append({ id: `uz${t}`, role: 'user', parts: [{ type: 'text', id: `uzt${t}`, text: `Status ${t}? ${'more words '.repeat(30)}` }] })
      session.append({ id: `az${t}`, role: 'assistant', parts: [{ type: 'text', id: `azt${t}`, text: `Still going ${t}. ${'more words '.repeat(30)}` }] })
    }
    const plan = session.prepareCompaction()!
    expect(plan.summarizedIDs).toContain('ao')
    const sections = parseSections(extractiveSummary(plan))
    expect(sections.get('in progress')).toEqual(['Unfinished tool call: bash({"command":"npm run deploy"})'])
    expect(sections.get('done')).toEqual(expect.arrayContaining(['Ran: `npx tsc --noEmit`', 'Ran: `npm run deploy`']))
    expect(sections.get('goal')!.at(-1)).toMatch(/^Latest request: /)
  })

  it('a previous summary in other sections is kept whole', () => {
    const plan = { ...planOf(), previousSummary: 'Free-form notes: the deploy key is in vault path secret/ci.' }
    const out = extractiveSummary(plan)
    expect(out).toContain('Earlier summary:\n  Free-form notes: the deploy key is in vault path secret/ci.')
  })
})
