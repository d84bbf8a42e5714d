// contextfold/opencode in the real agent: opencode-ai (installed from the npm registry, cached in
// .cache/) runs `opencode run` in a temp project whose only setup is the one-line plugin file, against
// a fake OpenAI-compatible server on 127.0.0.1 that plays the model (tool calls, usage reports).
// Each test compares with the same run with the plugin turned off (CONTEXTFOLD_OPENCODE=off).
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { PRUNED_MARKER } from '../dist/native.js'
import { FACTS_HEADER } from '../dist/opencode/facts.js'
import { FakeOpenAI, type Received, type Reply, type ToolCall } from './fake-openai.js'
import { OPENCODE_VERSION, contentText, kindOf, makeProject, mappedAddons, opencodeBinary, removeProject, runOpencode, sessionOf, type RunResult } from './opencode-agent.js'

const PLUGIN = "export { ContextfoldPlugin } from 'contextfold/opencode'\n"
const OFF = { CONTEXTFOLD_OPENCODE: 'off' }
/** Usage the fake model reports: far under the 8000-token window, or at it (opencode then compacts). */
const SMALL = { prompt_tokens: 300, completion_tokens: 10, total_tokens: 310 }
const NEAR_LIMIT = { prompt_tokens: 7900, completion_tokens: 10, total_tokens: 7910 }
const SUMMARY: Reply = { text: '## Objective\n- fix the build', usage: SMALL }

/**
 * The plugin file of a traced project: OpenTelemetry's SDK registered in opencode's process, each
 * finished span written as a JSON line to $CONTEXTFOLD_SPANS, then contextfold's plugin.
 */
const TRACED_PLUGIN = `import { appendFileSync } from 'node:fs'
import { trace } from '@opentelemetry/api'
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'

const exporter = {
  export(spans, done) {
    for (const s of spans) {
      const span = { name: s.name, id: s.spanContext().spanId, parent: s.parentSpanContext?.spanId, attributes: s.attributes, events: s.events.map((e) => ({ name: e.name, attributes: e.attributes })), status: s.status }
      appendFileSync(process.env.CONTEXTFOLD_SPANS, JSON.stringify(span) + '\\n')
    }
    done({ code: 0 })
  },
  async shutdown() {},
}
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))

export { ContextfoldPlugin } from 'contextfold/opencode'
`

const lines = (name: string, char: string) => Array.from({ length: 500 }, (_, i) => `${name} line ${i} ${char.repeat(50)}`).join('\n')

const fake = new FakeOpenAI()
let project: string

beforeAll(async () => {
  opencodeBinary() // the install, once (kept in .cache/)
  await fake.start()
  project = makeProject({
    baseURL: fake.baseURL,
    limit: { context: 8000, output: 1000 },
    plugin: PLUGIN,
    files: { 'big.txt': lines('big', 'x'), 'other.txt': lines('other', 'y') },
  })
}, 300_000)

afterAll(async () => {
  await fake.close()
  if (project) removeProject(project)
})

/**
 * One session: an `opencode run` per prompt (the later ones continue the session). The agent's
 * n-th call (from 0, across the runs) gets `agent(n)`, a compaction call a summary. Returns the
 * runs and the requests they made.
 */
async function session(
  prompts: string[],
  agent: (n: number, r: Received) => Reply,
  opts: { env?: Record<string, string>; maxRequests?: number; onAgent?: (pid: number) => void; project?: string } = {},
): Promise<{ runs: RunResult[]; requests: Received[] }> {
  fake.reset()
  let n = 0
  let pid = 0
  fake.fallback = (r) => {
    if (kindOf(r) === 'compaction') return SUMMARY
    if (n === 0) opts.onAgent?.(pid)
    return agent(n++, r)
  }
  const max = opts.maxRequests
  const runs: RunResult[] = []
  let id: string | undefined
  for (const prompt of prompts) {
    const resume = id === undefined ? [] : ['--session', id]
    runs.push(
      await runOpencode(opts.project ?? project, ['run', '--print-logs', '--title', 'test', ...resume, ...prompt.split(' ')], {
        env: opts.env ?? {},
        onStart: (p) => (pid = p),
        ...(max !== undefined ? { stopWhen: () => fake.requests.length >= max } : {}),
      }),
    )
    id ??= fake.requests.map(sessionOf).find((s) => s !== undefined)
  }
  return { runs, requests: [...fake.requests] }
}

/** Each run ended by itself, successfully. */
function expectDone(runs: RunResult[]): void {
  for (const r of runs) expect(r, r.stderr.slice(-2000)).toMatchObject({ code: 0, killed: false })
}

const agentCalls = (requests: Received[]) => requests.filter((r) => kindOf(r) === 'agent')
const compactions = (requests: Received[]) => requests.filter((r) => kindOf(r) === 'compaction')
const call = (id: string, name: string, args: unknown): Reply => ({ text: '', toolCalls: [{ id, name, arguments: args } satisfies ToolCall], usage: SMALL })

/** Every tool call of a request has its result and every result its call; returns the number of pairs. */
function checkPairs(r: Received): number {
  const calls = r.body.messages.flatMap((m) => m.tool_calls?.map((c) => c.id) ?? [])
  const results = r.body.messages.flatMap((m) => (m.role === 'tool' && m.tool_call_id ? [m.tool_call_id] : []))
  expect([...results].sort()).toEqual([...calls].sort())
  return calls.length
}

const toolResult = (r: Received, id: string) => contentText(r.body.messages.find((m) => m.role === 'tool' && m.tool_call_id === id)?.content)

/** contextfold's lines in the logs of `runs` (opencode prints its log to stderr with `--print-logs`). */
function contextfoldLog(runs: RunResult[]): string[] {
  return runs.flatMap((r) => r.stderr.split('\n').filter((l) => l.includes('message="contextfold: ')))
}

// Each test runs opencode two to six times; a slow machine gets room (no test asserts a duration).
describe(`contextfold/opencode in opencode ${OPENCODE_VERSION}`, { timeout: 300_000 }, () => {
  // Three requests: read two big files; run a command; read the first file again.
  const PROMPTS = ['Read big.txt and other.txt.', 'Run the checks.', 'Read big.txt again.']
  const reads = (n: number): Reply => {
    if (n === 0) return call('read_big', 'read', { filePath: join(project, 'big.txt') })
    if (n === 1) return call('read_other', 'read', { filePath: join(project, 'other.txt') })
    if (n === 3) return call('check', 'bash', { command: 'echo checks passed', description: 'checks' })
    if (n === 5) return call('read_big_again', 'read', { filePath: join(project, 'big.txt') })
    return { text: 'Done.', usage: SMALL }
  }

  it('loads in opencode (the native addon in its Bun process) and prunes old tool output in every model call, pairs intact', async () => {
    let addons: string[] = []
    const on = await session(PROMPTS, reads, { onAgent: (pid) => process.platform === 'linux' && (addons = mappedAddons(pid)) })
    const off = await session(PROMPTS, reads, { env: OFF })
    expectDone([...on.runs, ...off.runs])

    if (process.platform === 'linux') expect(addons.some((f) => f.endsWith('.node') && f.includes('contextfold'))).toBe(true)
    const [lastOn, lastOff] = [agentCalls(on.requests).at(-1)!, agentCalls(off.requests).at(-1)!]
    expect(agentCalls(on.requests)).toHaveLength(7)
    expect(agentCalls(off.requests)).toHaveLength(7)
    // Without the plugin opencode sends every output whole.
    expect(toolResult(lastOff, 'read_big')).toBe(toolResult(lastOff, 'read_big_again'))
    expect(toolResult(lastOff, 'read_other')).toContain('other line 250')
    // With it: the first read of big.txt points at the later identical read, other.txt is cleared
    // by the age rule (its numbers scaled to this 8k window: 1,600 tokens of output protected).
    expect(toolResult(lastOn, 'read_big')).toMatch(/^\[Unchanged: same content as the later read of .*big\.txt/)
    expect(toolResult(lastOn, 'read_other')).toBe(PRUNED_MARKER)
    // The newest result alone (about 8k tokens) does not fit this 8k window: the model reads it cut
    // to fit, its head and tail around the marker, and the log says so.
    const newest = toolResult(lastOn, 'read_big_again')
    expect(toolResult(lastOff, 'read_big_again').length).toBeGreaterThan(30_000)
    expect(newest.length).toBeLessThan(22_000)
    expect(newest).toContain('big line 0 ')
    expect(newest).toContain('big line 499 ')
    expect(newest).toMatch(/\[\.\.\. omitted \d+ chars \.\.\.\]/)
    expect(contextfoldLog(on.runs).some((l) => /the model had not read yet would not fit the window: cut to fit/.test(l))).toBe(true)
    expect(JSON.stringify(lastOn.body).length).toBeLessThan(JSON.stringify(lastOff.body).length - 40_000)
    for (const r of [...agentCalls(on.requests), ...agentCalls(off.requests)]) checkPairs(r)
    expect(checkPairs(lastOn)).toBe(4)
    expect(contextfoldLog(on.runs).some((l) => /contextfold: cleared [1-9]\d* more old tool outputs/.test(l))).toBe(true)

    // Reversible: what opencode stored is whole (the plugin changed only what one call sent).
    const id = sessionOf(lastOn)!
    const exported = await runOpencode(project, ['export', id], { env: OFF, stdoutFile: join(dirname(project), 'export.json') })
    const stored = (JSON.parse(exported.stdout) as { messages: Array<{ parts: Array<{ callID?: string; state?: { output?: string; time?: { compacted?: number } } }> }> }).messages
      .flatMap((m) => m.parts)
      .filter((p) => p.callID?.startsWith('read_'))
    expect(stored).toHaveLength(3)
    for (const p of stored) {
      expect(p.state?.time?.compacted).toBeUndefined()
      expect(p.state?.output).toContain('line 499')
    }
  })

  it("gives opencode's compaction call the session's facts: latest request, constraint, last error, modified file", async () => {
    const task = (n: number): Reply => {
      if (n === 0) return call('fail', 'bash', { command: "printf 'error: missing semicolon in src/app.ts\\n' >&2; exit 1", description: 'build' })
      if (n === 1) return call('write', 'write', { filePath: join(project, 'src', 'app.ts'), content: 'export const a = 1;\n' })
      if (n === 2) return { text: 'Fixed the semicolon.', usage: NEAR_LIMIT } // opencode compacts
      return { text: 'Done.', usage: SMALL }
    }
    const prompt = 'Fix the build in src/app.ts. Never touch the lockfile.'
    const on = await session([prompt], task)
    const off = await session([prompt], task, { env: OFF })
    expectDone([...on.runs, ...off.runs])
    expect(compactions(on.requests)).toHaveLength(1)
    expect(compactions(off.requests)).toHaveLength(1)

    const promptOf = (r: Received) => contentText(r.body.messages.find((m) => m.role === 'user')?.content)
    const withFacts = promptOf(compactions(on.requests)[0]!)
    const facts = withFacts.slice(withFacts.indexOf(FACTS_HEADER))
    expect(facts.startsWith(FACTS_HEADER)).toBe(true)
    expect(facts).toContain(`- Latest request: ${prompt}`)
    expect(facts).toContain('- Constraint: Never touch the lockfile.')
    expect(facts).toContain('- Last error (unresolved): error: missing semicolon in src/app.ts')
    expect(facts).toContain(`- Modified file: ${join(project, 'src', 'app.ts')}`)
    // opencode's own prompt is unchanged before them; without the plugin there is nothing after it.
    const plain = promptOf(compactions(off.requests)[0]!)
    expect(plain).not.toContain(FACTS_HEADER)
    expect(withFacts.startsWith(plain.slice(0, 200))).toBe(true)
  })

  it("OpenTelemetry: a contextfold.compact span for opencode's compaction, from its start to its summary", async () => {
    const traced = makeProject({
      baseURL: fake.baseURL,
      limit: { context: 8000, output: 1000 },
      plugin: TRACED_PLUGIN,
      links: ['@opentelemetry/api', '@opentelemetry/sdk-trace-base'],
    })
    try {
      const file = join(dirname(traced), 'spans.jsonl')
      const task = (n: number): Reply => {
        if (n === 0) return call('fail', 'bash', { command: "printf 'error: missing semicolon in src/app.ts\\n' >&2; exit 1", description: 'build' })
        if (n === 1) return call('write', 'write', { filePath: join(traced, 'src', 'app.ts'), content: 'export const a = 1;\n' })
        if (n === 2) return { text: 'Fixed the semicolon.', usage: NEAR_LIMIT } // opencode compacts
        return { text: 'Done.', usage: SMALL }
      }
      const on = await session(['Fix the build in src/app.ts. Never touch the lockfile.'], task, { project: traced, env: { CONTEXTFOLD_SPANS: file } })
      expectDone(on.runs)
      expect(compactions(on.requests)).toHaveLength(1)
      const spans = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { name: string; attributes: Record<string, unknown>; status: { code: number } })
      const [span, ...more] = spans.filter((s) => s.name === 'contextfold.compact')
      expect(more).toEqual([])
      expect(span!.attributes).toMatchObject({
        'contextfold.integration': 'opencode',
        'gen_ai.conversation.id': sessionOf(on.requests[0]!),
        'contextfold.trigger': 'threshold',
        'contextfold.status': 'compacted',
        'gen_ai.conversation.compacted': true,
        'contextfold.fallback': false,
        // The summary call's usage, as the fake server reported it (SUMMARY).
        'gen_ai.usage.input_tokens': SMALL.prompt_tokens,
        'gen_ai.usage.output_tokens': SMALL.completion_tokens,
        // The four facts given to opencode's prompt (request, constraint, error, modified file): its
        // summary ("fix the build") kept none of them, and opencode restores nothing.
        'contextfold.facts': 4,
        'contextfold.audit.kept': 0,
        'contextfold.audit.restored': 0,
        'contextfold.audit.dropped': 4,
      })
      // Before: the usage the agent's answer reported (at the limit); after: the summary and what follows it.
      expect(span!.attributes['contextfold.tokens.before']).toBeGreaterThanOrEqual(NEAR_LIMIT.prompt_tokens)
      expect(span!.attributes['contextfold.tokens.after']).toBeLessThan(1_000)
      expect(span!.status.code).toBe(0)
    } finally {
      removeProject(traced)
    }
  })

  it('stops the compact → continue → compact loop when the provider keeps reporting usage at the limit', async () => {
    const atLimit = (): Reply => ({ text: 'Working on it.', usage: NEAR_LIMIT })
    // Without the plugin opencode does not stop by itself: the test ends it after 20 requests.
    const off = await session(['Keep going.'], atLimit, { env: OFF, maxRequests: 20 })
    expect(off.runs[0]!.killed).toBe(true)
    expect(compactions(off.requests).length).toBeGreaterThanOrEqual(6)

    const on = await session(['Keep going.'], atLimit, { maxRequests: 30 })
    expectDone(on.runs)
    // The breaker's rule: 2 compactions in a row that left the context over the limit; the third
    // compaction gets no auto-continue.
    expect(compactions(on.requests)).toHaveLength(3)
    expect(agentCalls(on.requests)).toHaveLength(3)
    expect(contextfoldLog(on.runs).some((l) => l.includes('level=WARN') && l.includes('2 compactions in a row left the context over the limit'))).toBe(true)
  })
})
