// The AI SDK middleware (and prepareStep) whose summarizer is the agent's own model sends the summary request as the
// agent's conversation: the call's prompt, tools and tool choice unchanged, then one instruction
// message, so the model (here the SDK's mock, reporting cached input from the prefix its earlier
// calls shared) reads the whole previous prompt from its cache. Another model gets the transcript.
import { createAnthropic } from '@ai-sdk/anthropic'
import * as ai from 'ai'
import { MockLanguageModelV2 } from 'ai/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { aiSdkSummarizer, contextfoldMiddleware, contextfoldPrepareStep } from '../dist/ai/index.js'
import type { CompactionResult } from '../dist/index.js'
import type { SummaryInputForm } from '../dist/types.js'
import { FakeOpenAI, PrefixCache, promptSegments } from './fake-openai.js'
import { UNPRUNED } from './ai-loop.js'

interface Call {
  prompt: Array<{ role: string; content: unknown }>
  tools: unknown
  toolChoice: unknown
  summary: boolean
  cached: number
  total: number
}

const isSummary = (prompt: unknown[]) => /being compacted|<conversation>/.test(JSON.stringify(prompt.at(-1)))

/** A tool loop of `steps` steps through the middleware; the summarizer is `summarizerModel` (the agent's model when it is the same object). */
async function run(summaryModel: 'same' | 'other', summaryInput?: SummaryInputForm, through: 'middleware' | 'prepareStep' = 'middleware') {
  const calls: Call[] = []
  const cache = new PrefixCache()
  const agent = new MockLanguageModelV2({
    modelId: 'agent-model',
    doGenerate: async ({ prompt, tools, toolChoice }) => {
      const { total, cached } = cache.read([tools, ...prompt])
      const summary = isSummary(prompt)
      calls.push({ prompt: prompt as Call['prompt'], tools, toolChoice, summary, cached, total })
      const usage = { inputTokens: total, outputTokens: 20, totalTokens: total + 20, cachedInputTokens: cached }
      if (summary) return { content: [{ type: 'text', text: '## Goal\n- audit the billing module' }], finishReason: 'stop', usage, warnings: [] }
      const id = `call_${calls.length}`
      return { content: [{ type: 'tool-call', toolCallId: id, toolName: 'bash', input: JSON.stringify({ cmd: `cat part${calls.length}` }) }], finishReason: 'tool-calls', usage, warnings: [] }
    },
  })
  const other = new MockLanguageModelV2({
    modelId: 'summary-model',
    doGenerate: async ({ prompt, tools, toolChoice }) => {
      calls.push({ prompt: prompt as Call['prompt'], tools, toolChoice, summary: true, cached: 0, total: 0 })
      return { content: [{ type: 'text', text: '## Goal\n- audit the billing module' }], finishReason: 'stop', usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12 }, warnings: [] }
    },
  })
  const compactions: CompactionResult[] = []
  let executed = 0
  const options = {
    contextWindow: 16_000,
    maxOutputTokens: 1_000,
    compaction: UNPRUNED,
    keep: 1_500,
    summarizer: aiSdkSummarizer(summaryModel === 'same' ? agent : other, { generateText: ai.generateText as never, maxRetries: 0 }),
    ...(summaryInput ? { summaryInput } : {}),
    onCompaction: ({ result }: { result: CompactionResult }) => compactions.push(result),
  }
  const system = 'You are a careful coding agent.'
  const bash = ai.tool({
    description: 'Run a command',
    inputSchema: ai.jsonSchema<{ cmd: string }>({ type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] }),
    execute: async ({ cmd }) => {
      executed++
      return `${cmd}:\n${Array.from({ length: 150 }, (_, i) => `line ${i} of the billing module, entry ${executed * 1000 + i}`).join('\n')}`
    },
  })
  const loop = {
    system,
    prompt: 'Audit every module of the billing service and never touch the migrations folder.',
    tools: { bash },
    maxOutputTokens: 1_000,
    stopWhen: ai.stepCountIs(10),
  }
  if (through === 'middleware') await ai.generateText({ ...loop, model: ai.wrapLanguageModel({ model: agent, middleware: contextfoldMiddleware(options) }) })
  else await ai.generateText({ ...loop, model: agent, prepareStep: contextfoldPrepareStep({ ...options, system, tools: { bash } }) as never })
  return { calls, compactions, executed }
}

describe('the AI SDK integration summarizing with the agent`s own model', () => {
  it.each(['middleware', 'prepareStep'] as const)('%s: sends the call as it was (prompt, tools, tool choice) plus the instructions, and reads the previous prompt from the cache', async (through) => {
    const { calls, compactions, executed } = await run('same', undefined, through)
    const compacted = compactions.filter((c) => c.status === 'compacted')
    expect(compacted.length).toBeGreaterThanOrEqual(1)
    const at = calls.findIndex((c) => c.summary)
    expect(at).toBeGreaterThan(0)
    const summary = calls[at]!
    const previous = calls[at - 1]!
    expect(previous.summary).toBe(false)
    // The previous agent call is the summary request's prefix, message for message.
    expect(summary.prompt.slice(0, previous.prompt.length)).toEqual(previous.prompt)
    expect(summary.tools).toEqual(previous.tools)
    expect(summary.toolChoice).toEqual(previous.toolChoice)
    const last = summary.prompt.at(-1)!
    expect(last.role).toBe('user')
    expect(JSON.stringify(last.content)).toMatch(/do NOT call tools/)
    // The cache covers the whole previous prompt, and the summary message records the read.
    expect(summary.cached).toBe(previous.total)
    expect(summary.cached / summary.total).toBeGreaterThan(0.7)
    expect(compacted[0]!.messages![1]!.tokens!.cacheRead).toBe(summary.cached)
    // No tool of the agent ran for the summary.
    expect(executed).toBe(calls.filter((c) => !c.summary).length)
  })

  it('another model gets the transcript form (no tools, its own system prompt), unless told otherwise', async () => {
    const { calls } = await run('other')
    const summary = calls.find((c) => c.summary)!
    expect(summary.tools).toBeUndefined()
    expect(summary.prompt[0]!.role).toBe('system')
    expect(JSON.stringify(summary.prompt[0]!.content)).toMatch(/summarization assistant/)
    const told = (await run('other', 'conversation')).calls.find((c) => c.summary)!
    expect(JSON.stringify(told.prompt.at(-1)!.content)).toMatch(/being compacted/)
    expect(told.tools).toEqual((await run('same')).calls.find((c) => !c.summary)!.tools)
  })
})

describe('the AI SDK`s Anthropic provider against a Messages endpoint that reports cache reads', () => {
  const server = new FakeOpenAI()
  beforeAll(() => server.start())
  afterAll(() => server.close())

  it('the summary request reads the whole previous request from the cache (cache_read_input_tokens), and the summary records it', async () => {
    server.cache = new PrefixCache()
    let n = 0
    server.fallback = (r) =>
      /being compacted/.test(JSON.stringify(r.body.messages.at(-1)))
        ? { text: '## Goal\n- audit the billing module' }
        : { text: '', toolCalls: [{ id: `toolu_${++n}`, name: 'bash', arguments: { cmd: `cat part${n}` } }] }
    const model = createAnthropic({ baseURL: server.baseURL, apiKey: 'test-key' })('claude-sonnet-4-5')
    const compactions: CompactionResult[] = []
    // ai v5's Anthropic provider leaves the cache out of `inputTokens`: the middleware reads the
    // provider's own usage report, so the session counts the whole prompt and compacts at the window.
    const middleware = contextfoldMiddleware({
      contextWindow: 16_000,
      maxOutputTokens: 1_000,
      compaction: UNPRUNED,
      keep: 1_500,
      summarizer: aiSdkSummarizer(model, { generateText: ai.generateText as never, maxRetries: 0 }),
      onCompaction: ({ result }) => compactions.push(result),
    })
    const bash = ai.tool({
      description: 'Run a command',
      inputSchema: ai.jsonSchema<{ cmd: string }>({ type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] }),
      execute: async ({ cmd }) => `${cmd}:\n${Array.from({ length: 150 }, (_, i) => `line ${i} of the billing module, entry ${n * 1000 + i}`).join('\n')}`,
    })
    await ai.generateText({
      model: ai.wrapLanguageModel({ model, middleware }),
      system: 'You are a careful coding agent.',
      prompt: 'Audit every module of the billing service and never touch the migrations folder.',
      tools: { bash },
      maxOutputTokens: 1_000,
      stopWhen: ai.stepCountIs(10),
      maxRetries: 0,
    })
    const at = server.requests.findIndex((r) => /being compacted/.test(JSON.stringify(r.body.messages.at(-1))))
    expect(at).toBeGreaterThan(0)
    const [previous, summary] = [server.requests[at - 1]!.body, server.requests[at]!.body]
    // Tools, system prompt and tool choice as the agent sent them; its messages are the prefix.
    // (Breakpoints mark where to cache, not what: they are left out of the comparison.)
    const content = (v: unknown) => JSON.parse(JSON.stringify(v, (k, x: unknown) => (k === 'cache_control' ? undefined : x)))
    expect(summary.tools).toEqual(previous.tools)
    expect(content(summary.system)).toEqual(content(previous.system))
    expect(summary.tool_choice).toEqual(previous.tool_choice)
    // Its messages are the prefix, block by block: the last step stays verbatim after the summary
    // (the model had not read its output), so it is left out, and the instructions join the
    // previous request's last message (Anthropic's alternation).
    type Block = { type: string; cache_control?: unknown }
    const blocks = (body: typeof previous) => promptSegments(body, true).slice(2) as Array<{ block?: Block }>
    const [sent, asked] = [blocks(previous), blocks(summary)]
    expect(content(asked.slice(0, sent.length))).toEqual(content(sent))
    expect(asked.length).toBeGreaterThan(sent.length)
    // Anthropic reads back only up to a breakpoint: the last block the agent's previous request
    // sent has one. What follows (the instructions) is read once, so it is sent as plain input
    // instead of being written to the cache at 1.25×.
    expect(asked[sent.length - 1]!.block?.cache_control).toEqual({ type: 'ephemeral' })
    expect(asked.slice(sent.length).filter((b) => b.block?.cache_control)).toEqual([])
    // The provider read the whole previous request from its cache, most of the summary request's input.
    const replay = new PrefixCache()
    const before = replay.read(promptSegments(previous, true))
    const now = replay.read(promptSegments(summary, true))
    expect(now.cached).toBe(before.total)
    expect(now.cached / now.total).toBeGreaterThan(0.7)
    // The step that arrived after the previous request, whose output the model had not read, is
    // not summarized: the next request gives it to the model verbatim, after the summary.
    const next = JSON.stringify(server.requests[at + 1]!.body.messages)
    expect(next).toContain('audit the billing module')
    expect(next).toContain(`line 149 of the billing module, entry ${at * 1000 + 149}`)
    // The summary message records the read as the provider reported it.
    expect(compactions.find((c) => c.status === 'compacted')!.messages![1]!.tokens!.cacheRead).toBe(now.cached)
  })
})
