// OpenTelemetry: real AI SDK tool loops (ai v5 and v6, their mock models) through the middleware and
// prepareStep with OpenTelemetry's SDK recording in memory; the span tree (contextfold.compact under
// the loop's ai.generateText, the summary call under contextfold.compact), its attributes and the
// prune events; compact() itself (fallback, failure, abort); and contextfold without the peer.
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import type { Tracer } from '@opentelemetry/api'
import * as ai5 from 'ai'
import { MockLanguageModelV2 } from 'ai/test'
import * as ai6 from 'ai-v6'
import { MockLanguageModelV3 } from 'ai-v6/test'
import { HumanMessage } from '@langchain/core/messages'
import { createAgent } from 'langchain'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'

import { aiSdkSummarizer, contextfoldMiddleware, contextfoldPrepareStep } from '../dist/ai/index.js'
import { contextfoldLangChain } from '../dist/langchain/index.js'
import { contextfoldProcessor } from '../dist/mastra/index.js'
import { AutoCompactor, Session, compact, extractiveSummarizer, type CompactionResult, type Summarizer } from '../dist/index.js'
import { MAX_OUTPUT, REQUEST, SYSTEM, WINDOW, scriptedModel, tools, type Major, type Seen } from './ai-loop.js'
import { PRUNED } from './helpers.js'
import { loopModel, loopTools, type LoopSeen } from './langchain-loop.js'
import { Recorded, registerGlobally, type ReadableSpan } from './tracing.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

const MAJORS: Major[] = [
  { name: 'ai v5', ai: ai5, Mock: MockLanguageModelV2, spec: 'v2', Agent: ai5.Experimental_Agent as never },
  { name: 'ai v6', ai: ai6, Mock: MockLanguageModelV3, spec: 'v3', Agent: ai6.ToolLoopAgent as never },
]
/** Steps of the loop: enough for two compactions of the 32k window (and prunes between them). */
const STEPS = 22
/** Old tool output is cleared once three newer steps follow it (the loop has one user turn). */
const PRUNE = { pruneProtect: 3_000, pruneMinimum: 0, pruneProtectSteps: 3 }
const SUMMARY_USAGE = { input: 900, output: 40 }

const recorded = new Recorded()
let unregister: () => void
beforeAll(() => (unregister = registerGlobally(recorded)))
afterAll(() => unregister())
beforeEach(() => recorded.reset())

/** The summary model: an AI SDK mock of the same major, answering a short summary. */
function summaryModel(major: Major): unknown {
  const usage =
    major.spec === 'v2'
      ? { inputTokens: SUMMARY_USAGE.input, outputTokens: SUMMARY_USAGE.output, totalTokens: SUMMARY_USAGE.input + SUMMARY_USAGE.output }
      : { inputTokens: { total: SUMMARY_USAGE.input, noCache: SUMMARY_USAGE.input }, outputTokens: { total: SUMMARY_USAGE.output, text: SUMMARY_USAGE.output } }
  return new major.Mock({
    provider: 'mock',
    modelId: 'summary-1',
    doGenerate: async () => ({
      content: [{ type: 'text', text: '## Goal\n- Audit the billing service.' }],
      finishReason: major.spec === 'v2' ? 'stop' : { unified: 'stop', raw: 'stop' },
      usage,
      warnings: [],
    }),
  })
}

const attr = (s: ReadableSpan, k: string) => s.attributes[k]

/** Each contextfold.compact span has the attributes of its compaction's result. */
function expectCompactions(spans: ReadableSpan[], results: CompactionResult[], integration: string): void {
  expect(spans).toHaveLength(results.length)
  const ids = new Set<unknown>()
  spans.forEach((s, i) => {
    const r = results[i]!
    expect(r.status).toBe('compacted')
    expect(s.attributes).toMatchObject({
      'contextfold.integration': integration,
      'contextfold.trigger': 'threshold',
      'contextfold.status': 'compacted',
      'gen_ai.conversation.compacted': true,
      'contextfold.tokens.before': r.tokensBefore,
      'contextfold.tokens.after': r.tokensAfter!,
      'contextfold.messages.summarized': r.plan!.summarizedIDs.length,
      'contextfold.fallback': false,
      'contextfold.audit.kept': r.audit!.kept.length,
      'contextfold.audit.restored': r.audit!.restored.length,
      'contextfold.audit.dropped': r.audit!.dropped.length,
    })
    expect(r.tokensAfter!).toBeLessThan(r.tokensBefore)
    // The user's constraint is a fact the summary must keep: the audit found it.
    expect(r.audit!.kept.length + r.audit!.restored.length).toBeGreaterThan(0)
    expect(s.status.code).toBe(0)
    ids.add(attr(s, 'gen_ai.conversation.id'))
  })
  // One conversation, named on every span.
  expect([...ids]).toHaveLength(1)
  expect(typeof [...ids][0]).toBe('string')
}

describe.each(MAJORS)('$name: contextfoldMiddleware with experimental_telemetry on', (major) => {
  it('two compactions: contextfold.compact under ai.generateText, the summary call (the AI SDK`s spans) under it, prune events on the steps', async () => {
    const { ai } = major
    const seen: Seen = { prompts: [], problems: [], tokens: [] }
    const results: CompactionResult[] = []
    const summarizer = aiSdkSummarizer(summaryModel(major) as never, { generateText: ai.generateText, settings: { experimental_telemetry: { isEnabled: true } } })
    const model = ai.wrapLanguageModel({
      model: scriptedModel(major, seen),
      middleware: contextfoldMiddleware({ contextWindow: WINDOW, summarizer, compaction: PRUNE, onCompaction: ({ result }) => results.push(result) }),
    })
    await ai.generateText({
      model,
      tools: tools(major, z),
      stopWhen: ai.stepCountIs(STEPS),
      maxOutputTokens: MAX_OUTPUT,
      system: SYSTEM,
      messages: [{ role: 'user', content: REQUEST }],
      experimental_telemetry: { isEnabled: true },
    })
    expect(seen.problems).toEqual([])
    const [loop, ...others] = recorded.named('ai.generateText').filter((s) => !recorded.parent(s))
    expect(others).toEqual([])

    const compactions = recorded.named('contextfold.compact')
    expect(compactions).toHaveLength(2)
    expectCompactions(compactions, results, 'ai')
    for (const c of compactions) {
      // The middleware runs inside the model call: the step's span, under the loop's.
      const step = recorded.parent(c)!
      expect(step.name).toBe('ai.generateText.doGenerate')
      expect(recorded.parent(step)).toBe(loop)
      // The summary call: contextfold's span, then the AI SDK's own for the summary model.
      const [summarize, ...more] = recorded.children(c)
      expect(more).toEqual([])
      expect(summarize!.name).toBe('contextfold.summarize')
      expect(summarize!.attributes).toMatchObject({
        'contextfold.summary.kind': 'summary',
        'contextfold.summary.input': 'transcript',
        'gen_ai.response.finish_reasons': ['stop'],
        'gen_ai.response.model': 'summary-1',
        'gen_ai.conversation.id': attr(c, 'gen_ai.conversation.id'),
      })
      const [sdk] = recorded.children(summarize!)
      expect(sdk!.name).toBe('ai.generateText')
      expect(sdk!.attributes['ai.model.id']).toBe('summary-1')
      expect(recorded.children(sdk!).map((s) => s.name)).toEqual(['ai.generateText.doGenerate'])
      // The summary's usage, as the provider reported it, on the compaction.
      expect(c.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': SUMMARY_USAGE.input, 'gen_ai.usage.output_tokens': SUMMARY_USAGE.output })
    }

    // Prunes: an event on the step whose prompt they changed (the loop's calls, in order).
    const steps = recorded.named('ai.generateText.doGenerate').filter((s) => recorded.parent(s) === loop)
    expect(steps).toHaveLength(seen.prompts.length)
    const pruned = steps.flatMap((s, i) => s.events.filter((e) => e.name === 'contextfold.prune').map((e) => ({ e, i })))
    expect(pruned.length).toBeGreaterThanOrEqual(2)
    for (const { e, i } of pruned) {
      expect(e.attributes).toMatchObject({ 'contextfold.integration': 'ai', 'contextfold.prune.policy': 'cache', 'gen_ai.conversation.id': attr(compactions[0]!, 'gen_ai.conversation.id') })
      expect(['cache-saving', 'after-compaction']).toContain(e.attributes!['contextfold.prune.reason'])
      expect(e.attributes!['contextfold.prune.tokens_freed']).toBeGreaterThan(1_000)
      expect(e.attributes!['contextfold.prune.parts_cleared']).toBeGreaterThan(0)
      expect(JSON.stringify(seen.prompts[i])).toContain(PRUNED)
    }
    // No step before the first prune sent a cleared output.
    expect(seen.prompts.slice(0, pruned[0]!.i).some((p) => JSON.stringify(p).includes(PRUNED))).toBe(false)
  })
})

describe('ai v5: contextfoldPrepareStep', () => {
  const major = MAJORS[0]!
  const { ai } = major

  async function loop(options: { telemetry?: boolean; sdkTelemetry: boolean; tracer?: Tracer }) {
    const seen: Seen = { prompts: [], problems: [], tokens: [] }
    const results: CompactionResult[] = []
    const toolSet = tools(major, z)
    const prepareStep = contextfoldPrepareStep({
      contextWindow: WINDOW,
      system: SYSTEM,
      tools: toolSet,
      maxOutputTokens: MAX_OUTPUT,
      compaction: PRUNE,
      onCompaction: ({ result }) => results.push(result),
      ...(options.telemetry !== undefined ? { telemetry: options.telemetry } : {}),
      ...(options.tracer ? { telemetry: { tracer: options.tracer } } : {}),
    })
    await ai.generateText({
      model: scriptedModel(major, seen),
      tools: toolSet,
      prepareStep,
      stopWhen: ai.stepCountIs(STEPS),
      maxOutputTokens: MAX_OUTPUT,
      system: SYSTEM,
      messages: [{ role: 'user', content: REQUEST }],
      experimental_telemetry: { isEnabled: options.sdkTelemetry },
    })
    expect(seen.problems).toEqual([])
    return results
  }

  it('the compaction spans sit under the loop`s ai.generateText; the extractive summary has its summarize span', async () => {
    const results = await loop({ sdkTelemetry: true })
    const compactions = recorded.named('contextfold.compact')
    expect(compactions).toHaveLength(2)
    expectCompactions(compactions, results, 'ai')
    const [root] = recorded.named('ai.generateText')
    for (const c of compactions) {
      expect(recorded.parent(c)).toBe(root)
      expect(recorded.children(c).map((s) => s.name)).toEqual(['contextfold.summarize'])
      // The offline summary reports no usage.
      expect(c.attributes['gen_ai.usage.input_tokens']).toBeUndefined()
    }
    // prepareStep prunes before the step's model call: the event is on the loop's span.
    const events = root!.events.filter((e) => e.name === 'contextfold.prune')
    expect(events.length).toBeGreaterThanOrEqual(2)
  })

  it('without the AI SDK`s telemetry the spans are roots; `telemetry: false` emits none; a tracer of its own gets them instead', async () => {
    await loop({ sdkTelemetry: false })
    const compactions = recorded.named('contextfold.compact')
    expect(compactions).toHaveLength(2)
    for (const c of compactions) expect(recorded.parent(c)).toBeUndefined()
    expect(recorded.named('ai.generateText')).toEqual([])
    // With no span active, each prune is a span of its own carrying the event.
    const prunes = recorded.named('contextfold.prune')
    expect(prunes.length).toBeGreaterThanOrEqual(2)
    for (const p of prunes) expect(p.events.map((e) => e.name)).toEqual(['contextfold.prune'])

    recorded.reset()
    const off = await loop({ sdkTelemetry: true, telemetry: false })
    expect(off.filter((r) => r.status === 'compacted')).toHaveLength(2)
    expect(recorded.spans().filter((s) => s.name.startsWith('contextfold.'))).toEqual([])
    expect(recorded.spans().flatMap((s) => s.events).filter((e) => e.name.startsWith('contextfold.'))).toEqual([])

    // A tracer of another provider (not the registered one), as `experimental_telemetry.tracer` takes it.
    recorded.reset()
    const own = new Recorded()
    await loop({ sdkTelemetry: false, tracer: own.provider.getTracer('app') })
    expect(recorded.spans().filter((s) => s.name.startsWith('contextfold.'))).toEqual([])
    expect(own.named('contextfold.compact')).toHaveLength(2)
    expect(own.named('contextfold.summarize')).toHaveLength(2)
  })
})

describe('contextfoldLangChain in createAgent', () => {
  it('each compaction has its contextfold.compact span, named after the thread and the langchain integration', async () => {
    const seen: LoopSeen = { prompts: [], problems: [], tokens: [] }
    const results: CompactionResult[] = []
    const agent = createAgent({
      model: loopModel(seen, STEPS),
      tools: loopTools,
      systemPrompt: SYSTEM,
      middleware: [contextfoldLangChain({ contextWindow: WINDOW, maxOutputTokens: MAX_OUTPUT, tokenizer: 'o200k', compaction: PRUNE, onCompaction: ({ result }) => results.push(result) })],
    })
    await agent.invoke({ messages: [new HumanMessage(REQUEST)] }, { configurable: { thread_id: 'thread-7' }, recursionLimit: 4 * STEPS })
    expect(seen.problems).toEqual([])
    const compactions = recorded.named('contextfold.compact')
    expect(compactions.length).toBeGreaterThanOrEqual(2)
    expectCompactions(compactions, results, 'langchain')
    expect(attr(compactions[0]!, 'gen_ai.conversation.id')).toBe('thread-7')
  })
})

describe('mastra: contextfoldProcessor', () => {
  it('the compaction spans name the integration and the thread; prune events are recorded', async () => {
    const { Agent } = await import('@mastra/core/agent')
    const { InMemoryStore } = await import('@mastra/core/storage')
    const { MastraLanguageModelV2Mock, simulateReadableStream } = await import('@mastra/core/test-utils/llm-mock')
    const { createTool } = await import('@mastra/core/tools')
    const { Memory } = await import('@mastra/memory')
    const mastra: Major = { name: 'mastra', ai: { simulateReadableStream }, Mock: MastraLanguageModelV2Mock, spec: 'v2', Agent: Agent as never }
    const seen: Seen = { prompts: [], problems: [], tokens: [] }
    const results: CompactionResult[] = []
    const toolSet = Object.fromEntries(
      Object.entries(tools(MAJORS[0]!, z)).map(([name, t]) => [name, createTool({ id: name, description: `The ${name} tool.`, inputSchema: z.object({ step: z.number() }), execute: (t as any).execute })]),
    )
    const agent = new Agent({
      id: 'auditor',
      name: 'auditor',
      instructions: SYSTEM,
      model: scriptedModel(mastra, seen),
      tools: toolSet,
      memory: new Memory({ storage: new InMemoryStore(), options: { lastMessages: 1_000 } }),
      inputProcessors: [contextfoldProcessor({ contextWindow: WINDOW, compaction: PRUNE, onCompaction: ({ result }) => results.push(result) })],
    })
    await agent.generate(REQUEST, { memory: { thread: 'audit-1', resource: 'user-1' }, maxSteps: STEPS, modelSettings: { maxOutputTokens: MAX_OUTPUT } })
    expect(seen.problems).toEqual([])
    const compactions = recorded.named('contextfold.compact')
    expect(compactions).toHaveLength(2)
    expectCompactions(compactions, results, 'mastra')
    // The conversation is the Mastra thread.
    expect(attr(compactions[0]!, 'gen_ai.conversation.id')).toBe('audit-1')
    for (const c of compactions) expect(recorded.children(c).map((s) => s.name)).toEqual(['contextfold.summarize'])
    const prunes = recorded.spans().flatMap((s) => s.events).filter((e) => e.name === 'contextfold.prune')
    expect(prunes.length).toBeGreaterThanOrEqual(2)
    for (const e of prunes) expect(e.attributes).toMatchObject({ 'contextfold.integration': 'mastra', 'gen_ai.conversation.id': 'audit-1' })
  })
})

describe('AutoCompactor: unread outputs cut to fit before a compaction', () => {
  it('the cut is a prune event of its own (reason fit-unread), before the compaction span', async () => {
    const s = new Session({ model: { limit: { context: 32_000, output: 4_096 } }, tokenizer: 'o200k' })
    s.append({ id: 'u1', role: 'user', parts: [{ type: 'text', id: 'u1t', text: 'Read the log.' }] })
    s.append({ id: 'a1', role: 'assistant', parts: [{ type: 'tool', id: 'a1t', callID: 'c1', tool: 'read', state: { status: 'completed', input: {}, output: ' word'.repeat(3_000) } }] })
    s.recordRequest()
    s.append({ id: 'a2', role: 'assistant', parts: [{ type: 'tool', id: 'a2t', callID: 'c2', tool: 'read', state: { status: 'completed', input: {}, output: ' word'.repeat(40_000) } }] })
    const step = await new AutoCompactor(s, { summarizer: extractiveSummarizer() }).afterStep()
    expect(step.cut?.rules.fit.parts).toBe(1)
    expect(step.compaction?.status).toBe('compacted')
    const [prune] = recorded.named('contextfold.prune')
    expect(prune!.events[0]!.attributes).toMatchObject({ 'contextfold.prune.reason': 'fit-unread', 'contextfold.prune.parts_cleared': 1, 'contextfold.prune.tokens_freed': step.cut!.tokensFreed })
    expect(recorded.named('contextfold.compact')).toHaveLength(1)
  })
})

describe('compact(): the compaction span of the core driver', () => {
  function session(): Session {
    const s = new Session({ model: { limit: { context: 4_000, output: 500 } }, tokenizer: 'o200k' })
    for (let i = 0; i < 12; i++) {
      s.append({ id: `u${i}`, role: 'user', parts: [{ type: 'text', id: `u${i}t`, text: `Question ${i}: never touch the migrations folder.` + ' word'.repeat(150) }] })
      s.append({ id: `a${i}`, role: 'assistant', parts: [{ type: 'text', id: `a${i}t`, text: `Answer ${i}.` + ' word'.repeat(150) }] })
    }
    return s
  }
  const failing = (status: number, message: string): Summarizer => async () => {
    throw Object.assign(new Error(message), { status })
  }

  it('a manual compaction whose summarizer fails with a server error: the fallback and its reason, the failed call`s span', async () => {
    const r = await compact(session(), { summarizer: failing(500, 'overloaded'), telemetry: { attributes: { 'app.user': 'u1' } } })
    expect(r.status).toBe('compacted')
    const [c] = recorded.named('contextfold.compact')
    expect(c!.attributes).toMatchObject({
      'app.user': 'u1',
      'contextfold.trigger': 'manual',
      'contextfold.status': 'compacted',
      'contextfold.fallback': true,
      'contextfold.fallback.reason': `${r.error!.code}: ${r.error!.message}`,
      'contextfold.tokens.before': r.tokensBefore,
      'contextfold.tokens.after': r.tokensAfter!,
    })
    expect(c!.attributes['contextfold.integration']).toBeUndefined()
    const [call] = recorded.children(c!)
    expect(call!.name).toBe('contextfold.summarize')
    expect(call!.status).toMatchObject({ code: 2, message: 'overloaded' })
    expect(call!.events.map((e) => e.name)).toEqual(['exception'])
  })

  it('an auth failure: a failed compaction, its span in error; an overflow and an abort say so', async () => {
    const failed = await compact(session(), { summarizer: failing(401, 'invalid x-api-key'), auto: true })
    expect(failed.status).toBe('failed')
    const [c] = recorded.named('contextfold.compact')
    expect(c!.attributes).toMatchObject({ 'contextfold.trigger': 'threshold', 'contextfold.status': 'failed', 'gen_ai.conversation.compacted': false, 'contextfold.reason': failed.reason })
    expect(c!.status).toMatchObject({ code: 2, message: failed.reason })

    recorded.reset()
    await compact(session(), { overflow: true })
    expect(recorded.named('contextfold.compact')[0]!.attributes['contextfold.trigger']).toBe('overflow')

    recorded.reset()
    const controller = new AbortController()
    const hanging: Summarizer = (_req, signal) => new Promise((_, reject) => signal!.addEventListener('abort', () => reject(signal!.reason)))
    const p = compact(session(), { summarizer: hanging, signal: controller.signal })
    setTimeout(() => controller.abort(), 20)
    await expect(p).rejects.toMatchObject({ code: 'CF_ABORTED' })
    const [aborted] = recorded.named('contextfold.compact')
    expect(aborted!.attributes['contextfold.status']).toBe('aborted')
    expect(aborted!.status.code).toBe(2)
  })

  it('without @opentelemetry/api (it cannot be resolved): compactions run, nothing is recorded', () => {
    // A child process where contextfold's require of the peer fails, with the SDK recording globally.
    const script = `
      import Module from 'node:module'
      const resolve = Module._resolveFilename
      Module._resolveFilename = function (request, parent, ...rest) {
        if (request === '@opentelemetry/api' && parent?.filename?.startsWith(${JSON.stringify(join(ROOT, 'dist'))})) {
          throw Object.assign(new Error("Cannot find module '@opentelemetry/api'"), { code: 'MODULE_NOT_FOUND' })
        }
        return resolve.call(this, request, parent, ...rest)
      }
      const { trace } = await import('@opentelemetry/api')
      const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import('@opentelemetry/sdk-trace-base')
      const exporter = new InMemorySpanExporter()
      trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))
      const { Session, compact, AutoCompactor } = await import('contextfold')
      const s = new Session({ model: { limit: { context: 4000, output: 500 } }, compaction: { pruneProtect: 100, pruneMinimum: 0 } })
      for (let i = 0; i < 12; i++) {
        s.append({ id: 'u' + i, role: 'user', parts: [{ type: 'text', id: 'u' + i + 't', text: 'Question ' + i + ' word'.repeat(150) }] })
        s.append({ id: 'a' + i, role: 'assistant', parts: [{ type: 'tool', id: 'a' + i + 't', callID: 'c' + i, tool: 'read', state: { status: 'completed', input: {}, output: ' word'.repeat(150) } }] })
      }
      const step = await new AutoCompactor(s, { prune: 'tier' }).afterStep()
      const r = await compact(s, {})
      // The same provider records a span of the app's own: it is registered and working.
      trace.getTracer('app').startSpan('app').end()
      console.log(JSON.stringify({ pruned: step.pruned?.prunedPartIDs.length ?? 0, status: r.status, spans: exporter.getFinishedSpans().map((x) => x.name) }))
    `
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' })
    expect(r.status, r.stderr).toBe(0)
    const out = JSON.parse(r.stdout) as { pruned: number; status: string; spans: string[] }
    expect(out.pruned).toBeGreaterThan(0)
    expect(out.status).toBe('compacted')
    expect(out.spans).toEqual(['app'])
  })
})
