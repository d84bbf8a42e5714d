// The `contextfold` CLI, run as a child process (`node dist/cli.js ...`) on examples/ and corpus
// files: inspect (human and --json, checked against the native API), compact (extractive, and
// openai-compatible against a real HTTP server on 127.0.0.1), convert (shapes of every format),
// errors and exit codes.
import { spawn } from 'node:child_process'
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'

import { Session, importTranscript, turns } from '../native.js'
import type { AnthropicRequest, Message, ModelMessage, OpenAIChatMessage, SessionOptions } from '../native.js'
import { TEMPLATES } from '../dist/templates.js'
import { CLI, ROOT, cli, type Run } from './cli-run.js'
import { FakeOpenAI } from './fake-openai.js'

const CORPUS = join(ROOT, '..', 'shared', 'corpus')
const corpus = (file: string) => join(CORPUS, file)
const CLAUDE = join(ROOT, 'examples', 'claude-code-session.jsonl')
const PI = join(ROOT, 'examples', 'pi-session.jsonl')
const UI_CHAT = join(ROOT, '__test__', 'fixtures', 'ai-sdk-ui-chat.json')

/** `cli([... '--json'])`, expecting `code`, with stdout parsed. */
async function json<T extends object = Record<string, any>>(args: string[], code = 0, opts?: Parameters<typeof cli>[1]): Promise<T & { __run: Run }> {
  const run = await cli([...args, '--json'], opts)
  if (run.code !== code) throw new Error(`exit ${run.code} (expected ${code}): ${run.stderr}\n${run.stdout.slice(0, 2000)}`)
  return Object.assign(JSON.parse(run.stdout) as T, { __run: run })
}

/** The options the CLI builds for `--context n` (output: 32000, at most a quarter of the window). */
function windowOptions(context = 200_000, extra: Partial<SessionOptions> = {}): SessionOptions {
  return { model: { limit: { context, output: Math.min(32_000, Math.floor(context / 4)) } }, ...extra }
}

function nativeSession(file: string, options: SessionOptions): { session: Session; messages: Message[]; imported: ReturnType<typeof importTranscript> } {
  const imported = importTranscript({ path: file })
  return { session: Session.fromMessages(imported.messages, options), messages: imported.messages, imported }
}

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'contextfold-cli-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// ---------------------------------------------------------------------------------------------
// Shapes of the provider formats.

function expectAnthropicShape(req: AnthropicRequest): void {
  const msgs = req.messages
  expect(msgs.length).toBeGreaterThan(0)
  expect(msgs[0]!.role).toBe('user')
  const ids = new Set<string>()
  msgs.forEach((m, i) => {
    if (i > 0) expect(m.role, `message ${i} repeats the role`).not.toBe(msgs[i - 1]!.role)
    const uses = m.content.filter((b) => b.type === 'tool_use') as Array<{ id: string; input: unknown }>
    for (const u of uses) {
      expect(m.role).toBe('assistant')
      expect(u.id).toMatch(/^[A-Za-z0-9_-]+$/)
      expect(ids.has(u.id), `tool_use id ${u.id} is unique`).toBe(false)
      ids.add(u.id)
      expect(typeof u.input === 'object' && u.input !== null && !Array.isArray(u.input)).toBe(true)
    }
    // Results: at the start of the next user message, one per call, for the calls just made.
    const results = m.content.filter((b) => b.type === 'tool_result') as Array<{ tool_use_id: string }>
    if (results.length > 0) {
      expect(m.role).toBe('user')
      const leading = m.content.slice(0, results.length)
      expect(leading.every((b) => b.type === 'tool_result'), `message ${i}: tool_result blocks come first`).toBe(true)
    }
    if (uses.length > 0) {
      const next = msgs[i + 1]
      expect(next, `message ${i}: its tool calls are answered`).toBeDefined()
      const answered = next!.content.filter((b) => b.type === 'tool_result').map((b) => (b as { tool_use_id: string }).tool_use_id)
      expect([...answered].sort()).toEqual(uses.map((u) => u.id).sort())
    }
    if (results.length > 0) {
      const prev = msgs[i - 1]
      const called = new Set(prev?.content.filter((b) => b.type === 'tool_use').map((b) => (b as { id: string }).id))
      for (const r of results) expect(called.has(r.tool_use_id), `tool_result ${r.tool_use_id} answers a call just made`).toBe(true)
    }
  })
}

function expectOpenAIShape(msgs: OpenAIChatMessage[]): void {
  expect(Array.isArray(msgs)).toBe(true)
  const seen = new Set<string>()
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i]!
    expect(['system', 'user', 'assistant', 'tool']).toContain(m.role)
    if (m.role === 'tool') throw new Error(`message ${i}: a tool message that answers no call`)
    if (m.role !== 'assistant' || !m.tool_calls?.length) continue
    const ids = m.tool_calls.map((t) => t.id)
    for (const t of m.tool_calls) {
      expect(t.type).toBe('function')
      expect(typeof t.function.arguments).toBe('string')
      expect(() => JSON.parse(t.function.arguments)).not.toThrow()
      expect(seen.has(t.id), `tool call id ${t.id} is unique`).toBe(false)
      seen.add(t.id)
    }
    // role: tool messages, one per call, right after the assistant message.
    const answers = msgs.slice(i + 1, i + 1 + ids.length)
    expect(answers.map((a) => a.role)).toEqual(ids.map(() => 'tool'))
    expect(answers.map((a) => (a as { tool_call_id: string }).tool_call_id).sort()).toEqual([...ids].sort())
    for (const a of answers) expect(typeof (a as { content: unknown }).content).toBe('string')
    i += ids.length
  }
}

function expectAiSdkShape(msgs: ModelMessage[]): void {
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i]!
    if (m.role !== 'assistant') continue
    const calls = m.content.filter((p) => p.type === 'tool-call') as Array<{ toolCallId: string }>
    if (calls.length === 0) continue
    const next = msgs[i + 1]
    expect(next?.role, `message ${i}: its tool calls are answered by a tool message`).toBe('tool')
    const results = (next as Extract<ModelMessage, { role: 'tool' }>).content.map((r) => r.toolCallId)
    expect(results.sort()).toEqual(calls.map((c) => c.toolCallId).sort())
  }
}

// ---------------------------------------------------------------------------------------------

describe('contextfold inspect', () => {
  it('shows format, counts, the coloured bar with its legend, largest outputs, prune and the cut (human)', async () => {
    const r = await cli(['inspect', CLAUDE])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('') // not a terminal: no progress display
    const out = r.stdout
    expect(out).toContain('claude-code')
    expect(out).toMatch(/messages\s+104/)
    expect(out).toMatch(/tool calls\s+50/)
    expect(out).toMatch(/Context\s+85,838 \/ 200,000 tokens/)
    for (const label of ['Tool calls', 'Tool output', 'Reasoning', 'Free', 'Reserved', 'Largest tool outputs', 'Prune', 'Compaction']) {
      expect(out).toContain(label)
    }
    // Without colours the bar uses one glyph per kind: 60 cells, tool output ('o') among them.
    const bar = out.split('\n').find((l) => /^ {2}[#uarcoms+?._]{20,}$/.test(l))
    expect(bar, out).toBeDefined()
    expect(bar!.trim()).toHaveLength(60)
    expect(bar).toContain('o')
    expect(out).not.toContain('\x1b[')
  })

  it('--json: every figure matches the native API (pi example, 30k window)', async () => {
    const report = await json(['inspect', PI, '--context', '30000'])
    expect(report.__run.stderr).toBe('')
    const opts = windowOptions(30_000)
    const { session, messages, imported } = nativeSession(PI, opts)
    expect(report.format).toBe('pi')
    expect(report.options).toEqual(session.options)
    expect(report.messages).toEqual({ total: messages.length, context: session.context().length })
    expect(report.turns).toEqual({ total: turns(messages).length, context: session.turns().length })
    expect(report.usage).toEqual(session.usage())
    expect(report.window).toEqual({ context: 30_000, output: 7_500, usable: session.usage().usable })
    expect(report.window.usable).toBe(22_500)
    expect(report.breakdown).toEqual(session.breakdown())
    const local = Object.values(session.breakdown()).reduce((a, b) => a + b, 0)
    expect(report.localTokens).toBe(local)
    expect(report.largestToolOutputs).toEqual(session.largestToolOutputs(10))
    const toolParts = messages.flatMap((m) => m.parts.filter((p) => p.type === 'tool'))
    expect(report.toolCalls.total).toBe(toolParts.length)
    expect(report.stats).toEqual(imported.stats)
    expect(report.warnings).toEqual([])

    const copy = Session.fromMessages(messages, session.options)
    const pruned = copy.prune()
    expect(report.prune).toEqual({
      tokensFreed: pruned.tokensFreed,
      parts: pruned.prunedPartIDs.length,
      messages: new Set(pruned.messageIDs).size,
      tokensAfter: copy.usage().tokens,
    })
    // The bill, as the cache-aware policy weighs it (relative prices: none were given), with the
    // next compaction at the cheapest threshold.
    const decision = session.decidePrune({ threshold: 'cost' })
    expect(report.cost).toEqual({
      priced: 'relative',
      warm: decision.warm,
      nextRequest: decision.nextRequest,
      prune: { saving: decision.saving, cost: decision.cost, pays: decision.prune },
      compaction: decision.compaction,
      compactAt: { tokens: decision.cheapestThreshold, due: true, waits: decision.deferCompaction },
    })
    expect(decision.cheapestThreshold).toBeLessThan(session.usage().usable)

    const sel = session.select()
    expect(report.cut).toMatchObject({
      overflow: true,
      headEnd: sel.headEnd,
      headMessages: sel.headEnd,
      tailMessages: session.context().length - sel.headEnd,
      tailTokens: sel.tailTokens,
      tailStartID: sel.tailStartID,
    })
    // The head is what a compaction would summarize.
    expect(report.cut.headTokens).toBe(session.prepareCompaction()!.tokensSummarized)
  })

  it('--prices and --cache-ttl price the cost lines; bad ones are usage errors', async () => {
    const report = await json(['inspect', CLAUDE, '--context', '100k', '--prices', '3,15,0.3,3.75', '--cache-ttl', '1h'])
    const opts: SessionOptions = { model: { limit: { context: 100_000, output: 25_000 } }, cache: { prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }, ttl: '1h' } }
    const { session } = nativeSession(CLAUDE, opts)
    const decision = session.decidePrune({ threshold: 'cost' })
    expect(report.cost).toMatchObject({ priced: 'options', nextRequest: decision.nextRequest, compaction: decision.compaction })
    const relative = await json(['inspect', CLAUDE, '--context', '100k'])
    expect(report.cost.nextRequest).toBeGreaterThan(relative.cost.nextRequest)
    expect((await cli(['inspect', CLAUDE, '--context', '100k', '--prices', '3,15,0.3,3.75'])).stdout).toMatch(/Cost\n\s+next request\s+\$[\d.]+ \(cache (warm|cold)/)
    for (const bad of [['--prices', '3'], ['--prices', '3,x'], ['--cache-ttl', '2h']]) {
      const r = await cli(['inspect', CLAUDE, ...bad])
      expect(r.code, bad.join(' ')).toBe(2)
      expect(r.stderr).toMatch(/is invalid/)
    }
  })

  it('counts the system prompt a transcript records as the middleware does, and names the files of the largest tool outputs', async () => {
    const file = corpus('codex/agentv-019ed836-small.jsonl')
    const report = await json(['inspect', file, '--tokenizer', 'o200k'])
    const imported = importTranscript({ path: file })
    const system = imported.overhead?.system
    expect(system?.[0]).toMatch(/^You are Codex/)
    const session = Session.fromMessages(imported.messages, windowOptions(200_000, { tokenizer: 'o200k' }))
    const tokens = session.setOverhead({ system: system! })
    expect(tokens).toBeGreaterThan(1_000)
    expect(report.sent).toEqual({ tokens: report.localTokens + tokens, messages: report.localTokens, system: tokens, tools: 0, source: { system: 'transcript' } })
    expect(report.usage).toEqual(session.usage())
    // --system replaces what the transcript records.
    const own = join(dir, 'own-system.txt')
    writeFileSync(own, 'Be brief.')
    const replaced = await json(['inspect', file, '--tokenizer', 'o200k', '--system', own])
    expect(replaced.sent.source).toEqual({ system: 'option' })
    expect(replaced.sent.system).toBeLessThan(20)
    // The largest tool outputs say the file a call read, where it names one.
    const pi = await json(['inspect', PI])
    const read = pi.largestToolOutputs.filter((t: { tool: string }) => t.tool === 'read')
    expect(read.length).toBeGreaterThan(0)
    for (const t of read) expect(t.path).toMatch(/\//)
    const text = (await cli(['inspect', PI])).stdout
    expect(text).toMatch(/tokens {2}tool {2}file +message/)
    expect(text).toMatch(new RegExp(`read +${read[0].path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `))
    expect(text).toMatch(/sent to the model {2}[\d,]+ tokens/)
  })

  it('--top, --tokenizer and --output change what is counted', async () => {
    const report = await json(['inspect', CLAUDE, '--context', '100k', '--output', '8000', '--tokenizer', 'o200k', '--top', '3'])
    const opts: SessionOptions = { model: { limit: { context: 100_000, output: 8_000 } }, tokenizer: 'o200k' }
    const { session } = nativeSession(CLAUDE, opts)
    expect(report.options.tokenizer).toBe('o200k')
    expect(report.breakdown).toEqual(session.breakdown())
    expect(report.usage).toEqual(session.usage())
    expect(report.largestToolOutputs).toEqual(session.largestToolOutputs(3))
    expect(report.largestToolOutputs).toHaveLength(3)
    expect(report.window).toEqual({ context: 100_000, output: 8_000, usable: session.usage().usable })
  })

  it('--system and --tools: counted in inspect and compact figures as the provider receives them', async () => {
    const system = join(dir, 'system.txt')
    const toolsFile = join(dir, 'tools.json')
    writeFileSync(system, 'You are a careful coding agent. '.repeat(200))
    const toolDefs = [{ name: 'bash', description: 'Runs a shell command.', inputSchema: { type: 'object', properties: { command: { type: 'string' } } } }]
    writeFileSync(toolsFile, JSON.stringify(toolDefs))
    // Messages without provider usage: everything is counted locally.
    const file = join(dir, 'no-usage.jsonl')
    const messages: Message[] = [
      { id: 'u1', role: 'user', parts: [{ type: 'text', id: 'u1.t', text: 'Fix the failing test in src/billing.ts.' }] },
      { id: 'a1', role: 'assistant', parts: [{ type: 'text', id: 'a1.t', text: 'Reading the test output first.' }] },
    ]
    writeFileSync(file, messages.map((m) => JSON.stringify(m)).join('\n') + '\n')
    const args = ['inspect', file, '--context', '100k', '--output', '8000', '--tokenizer', 'o200k']
    const plain = await json(args)
    const report = await json([...args, '--system', system, '--tools', toolsFile])
    const session = Session.fromMessages(messages, { model: { limit: { context: 100_000, output: 8_000 } }, tokenizer: 'o200k' })
    const tokens = session.setOverhead({ system: readFileSync(system, 'utf8'), tools: toolDefs })
    expect(tokens).toBeGreaterThan(1_000)
    expect(report.sent.system + report.sent.tools).toBe(tokens)
    expect(report.sent.system).toBe(session.setOverhead({ system: readFileSync(system, 'utf8') }))
    expect(report.sent).toMatchObject({ tokens: report.localTokens + tokens, messages: report.localTokens, source: { system: 'option', tools: 'option' } })
    session.setOverhead({ system: readFileSync(system, 'utf8'), tools: toolDefs })
    expect(report.usage).toEqual(session.usage())
    expect(report.usage.tokens).toBe(plain.usage.tokens + tokens)
    expect(report.prune.tokensAfter).toBe(plain.prune.tokensAfter + tokens)
    expect(plain.sent).toEqual({ tokens: plain.localTokens, messages: plain.localTokens, system: 0, tools: 0, source: {} })
    expect((await cli(['inspect', file, '--system', system])).stdout).toMatch(/sent to the model {2}[\d,]+ tokens: messages [\d,]+ \+ system prompt [\d,]+ \(--system \/ --tools\) \+ tools 0/)
    // compact's before figure counts them too.
    const compacted = await json(['compact', file, '--tokenizer', 'o200k', '--system', system, '--tools', toolsFile])
    const bare = await json(['compact', file, '--tokenizer', 'o200k'])
    expect(compacted.before.tokens).toBe(bare.before.tokens + tokens)
    // Bad files are usage errors naming the option.
    writeFileSync(join(dir, 'bad.json'), '{ not json')
    const bad = await cli(['inspect', CLAUDE, '--tools', join(dir, 'bad.json')])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--tools')
    const missing = await cli(['inspect', CLAUDE, '--system', join(dir, 'nope.txt')])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('--system')
  })

  it('the prune preview and the cost line come from one dry run: the figures a real prune gives', async () => {
    const system = join(dir, 'prune-system.txt')
    writeFileSync(system, 'You are a careful coding agent. '.repeat(100))
    const usd = (x: number) => `$${x < 0.01 ? x.toFixed(4) : x.toFixed(2)}`
    const fmt = (n: number) => n.toLocaleString('en-US')
    for (const file of ['codex/agentv-019ed99c-3compactions.jsonl', 'pi/pi-mono-before-compaction-v1.jsonl']) {
      for (const extra of [[], ['--system', system]]) {
        const args = ['inspect', corpus(file), ...extra]
        const report = await json(args)
        const { session, messages, imported } = nativeSession(corpus(file), windowOptions())
        const copy = Session.fromMessages(messages, session.options)
        // --system, else the system prompt the transcript records (Codex's), as the CLI counts it.
        const overhead = extra.length ? { system: readFileSync(system, 'utf8') } : imported.overhead
        for (const s of overhead ? [session, copy] : []) s.setOverhead(overhead!)
        const decision = session.decidePrune({ threshold: 'cost' })
        const pruned = copy.prune()
        const freed = { tokensFreed: pruned.tokensFreed, parts: pruned.prunedPartIDs.length, messages: new Set(pruned.messageIDs).size }
        expect(freed.parts, file).toBeGreaterThan(0)
        expect(report.prune, `${file} ${extra.join(' ')}`).toEqual({ ...freed, tokensAfter: copy.usage().tokens })
        expect(report.cost.prune).toEqual({ saving: decision.saving, cost: decision.cost, pays: decision.prune })
        const out = (await cli(args)).stdout
        expect(out).toContain(
          `Prune  would free ${fmt(freed.tokensFreed)} tokens from ${fmt(freed.parts)} tool outputs in ${fmt(freed.messages)} messages ` +
            `(${fmt(session.usage().tokens)} → ${fmt(copy.usage().tokens)} tokens)`,
        )
        const effect =
          decision.saving >= 0 ? `saves ${usd(decision.saving)} over the requests to follow` : `makes the requests to follow cost ${usd(-decision.saving)} more`
        expect(out).toMatch(new RegExp(`prune now +${effect.replace(/\$/g, '\\$')}, costs \\${usd(decision.cost)} of cache re-writes`))
        const { tokens, due, waits } = report.cost.compactAt
        expect(tokens).toBe(decision.cheapestThreshold)
        expect(due).toBe(session.isOverflow() || session.usage().tokens >= tokens)
        const now = !due ? `${fmt(tokens - session.usage().tokens)} tokens away` : waits ? 'due, waits one step for the model to read the newest output' : 'due now'
        expect(out).toContain(`next compaction  at ${fmt(tokens)} tokens (the default's cheapest threshold): ${now}`)
      }
    }
  })

  it('corpus files of every kind: the detected format and counts are the importer’s', async () => {
    const files = [
      'codex/agentv-019ed836-small.jsonl',
      'swe-agent/pydicom-1458-gpt4-textaction.traj',
      'mini-swe-agent/github-issue-textaction-v1.traj.json',
      'openhands/oh-basic-gui-mode-vue-todo.json',
      'gemini-cli/entirecli-gemini-session.json',
      'kimi-cli/sklearn-26323-context-main.jsonl',
      'claude-code/entirecli-062a8bdd-image-compaction.jsonl',
    ]
    const reports = await Promise.all(files.map((f) => json(['inspect', corpus(f)])))
    for (const [i, f] of files.entries()) {
      const report = reports[i]!
      const { session, imported } = nativeSession(corpus(f), windowOptions())
      expect(report.format, f).toBe(imported.format)
      expect(report.messages, f).toEqual({ total: imported.messages.length, context: session.context().length })
      expect(report.breakdown, f).toEqual(session.breakdown())
      expect(report.usage, f).toEqual(session.usage())
    }
  })

  it('a transcript with compactions and media: summaries and media appear in the breakdown', async () => {
    const file = corpus('claude-code/entirecli-062a8bdd-image-compaction.jsonl')
    const report = await json(['inspect', file])
    expect(report.compactions).toBeGreaterThan(0)
    expect(report.messages.context).toBeLessThan(report.messages.total)
    expect(report.breakdown.summaries).toBeGreaterThan(0)
    const human = await cli(['inspect', file])
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/compactions\s+\d/)
    expect(human.stdout).toContain('Summaries')
  })

  it('import warnings are listed with their line numbers', async () => {
    const file = corpus('openai-chat/swesmith-ft-xml-3convs.jsonl')
    const expected = importTranscript({ path: file }).warnings
    expect(expected.length).toBeGreaterThan(0)
    const report = await json(['inspect', file])
    expect(report.warnings).toEqual(expected)
    const human = await cli(['inspect', file])
    expect(human.code).toBe(0)
    expect(human.stdout).toContain(`Warnings (${expected.length})`)
    for (const w of expected) expect(human.stdout).toContain(w.line > 0 ? `line ${w.line}: ${w.message}` : w.message)

    // Malformed lines in a transcript: skipped, reported at their line.
    const lines = readFileSync(PI, 'utf8').split('\n')
    const broken = join(dir, 'broken.jsonl')
    writeFileSync(broken, [...lines.slice(0, 4), '{"type": "message", "message": {', ...lines.slice(4, 30), 'not json at all'].join('\n'))
    const b = await json(['inspect', broken])
    expect(b.warnings.map((w: { line: number }) => w.line)).toEqual([5, 32])
  })

  it('reads contextfold messages (as convert writes them) and standard input', async () => {
    const out = join(dir, 'claude-messages.jsonl')
    const conv = await cli(['convert', CLAUDE, '--to', 'contextfold', '--out', out, '--out-format', 'messages'])
    expect(conv.code).toBe(0)
    const original = await json(['inspect', CLAUDE, '--context', '30000'])
    const copy = await json(['inspect', out, '--context', '30000'])
    expect(copy.format).toBe('contextfold')
    for (const k of ['messages', 'turns', 'toolCalls', 'usage', 'breakdown', 'largestToolOutputs', 'prune', 'cut']) expect(copy[k], k).toEqual(original[k])

    const piped = await json(['inspect', '-', '--context', '30000'], 0, { input: readFileSync(out, 'utf8') })
    expect(piped.usage).toEqual(original.usage)
    const pipedTranscript = await json(['inspect', '-'], 0, { input: readFileSync(PI, 'utf8') })
    expect(pipedTranscript.format).toBe('pi')
  })

  it('colours only when asked for (FORCE_COLOR) and never with --no-color', async () => {
    const colored = await cli(['inspect', PI, '--context', '30000'], { env: { FORCE_COLOR: '1' } })
    expect(colored.code).toBe(0)
    expect(colored.stdout).toContain('\x1b[')
    expect(colored.stdout).toContain('█')
    const plain = await cli(['inspect', PI, '--context', '30000', '--no-color'], { env: { FORCE_COLOR: '1' } })
    expect(plain.stdout).not.toContain('\x1b[')
  })
})

describe('contextfold compact (extractive)', () => {
  it('--json: fewer tokens and messages after, the summary names the modified files', async () => {
    const report = await json(['compact', PI, '--context', '30000'])
    expect(report.__run.stderr).toBe('')
    expect(report).toMatchObject({ status: 'compacted', fallback: false, summarizer: { name: 'extractive' }, template: 'anchored', format: 'pi' })
    expect(report.after.tokens).toBeLessThan(report.before.tokens)
    expect(report.after.messages).toBeLessThan(report.before.messages)
    expect(report.before.tier).toBe('compact')
    expect(report.after.pressure).toBeLessThan(1)

    const { session } = nativeSession(PI, windowOptions(30_000))
    expect(report.before).toEqual({ ...pick(session.usage()), messages: session.context().length })
    const plan = session.prepareCompaction()!
    expect(plan.modifiedFiles.length).toBeGreaterThan(0)
    expect(report.summarized).toMatchObject({ messages: plan.summarizedIDs.length, tokens: plan.tokensSummarized, modifiedFiles: plan.modifiedFiles })
    for (const f of plan.modifiedFiles) expect(report.summary).toContain(f)
    expect(report.summary).toContain('<modified-files>')
  })

  it('a session that does not overflow keeps its newer half verbatim, the current request in it', async () => {
    // 12 messages in 3 turns, 5.4k tokens counted locally: the whole context fits the tail budget
    // (15,000), so the tail keeps the newer half of it rather than nothing.
    const file = corpus('claude-code/ccviewer-fe5e1c67-orchestrator-todoapp.jsonl')
    const report = await json(['compact', file])
    expect(report).toMatchObject({ status: 'compacted', before: { tier: 'ok', messages: 12 } })
    const { session } = nativeSession(file, windowOptions())
    const plan = session.prepareCompaction()!
    const context = session.context()
    const tail = context.slice(context.findIndex((m) => m.id === plan.tailStartID))
    const tailTokens = session.contextTokens().tokens.slice(context.length - tail.length).reduce((a, b) => a + b, 0)
    const all = session.contextTokens().tokens.reduce((a, b) => a + b, 0)
    expect(tailTokens).toBeGreaterThan(0)
    expect(tailTokens).toBeLessThanOrEqual(all / 2)
    expect(report.summarized.messages).toBe(plan.summarizedIDs.length)
    expect(plan.summarizedIDs.length).toBeLessThan(12)
    // The newest user request is kept as it was, not only inside the summary.
    const latest = context.findLast((m) => m.role === 'user' && m.parts.some((p) => p.type === 'text'))!
    expect(tail.map((m) => m.id)).toContain(latest.id)
  })

  it('human output: before / after figures and the summary; --out writes the compacted session', async () => {
    const out = join(dir, 'claude-compacted.jsonl')
    const r = await cli(['compact', CLAUDE, '--context', '30000', '--out', out, '--out-format', 'messages'])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    expect(r.stdout).toContain('compacted')
    expect(r.stdout).toMatch(/tokens\s+85,838\s+→\s+[\d,]+/)
    expect(r.stdout).toContain('messages in context')
    expect(r.stdout).toContain('Summary')
    expect(r.stdout).toContain('<modified-files>')
    expect(r.stdout).toContain(`to ${out}`)

    const lines = readFileSync(out, 'utf8').trimEnd().split('\n')
    const written = lines.map((l) => JSON.parse(l) as Message)
    const original = importTranscript({ path: CLAUDE }).messages
    expect(written).toHaveLength(original.length + 3) // request, summary, continue
    expect(written.slice(0, original.length).map((m) => m.id)).toEqual(original.map((m) => m.id))
    expect(written[original.length + 1]).toMatchObject({ role: 'assistant', summary: true, finish: 'stop' })

    // What was written reads back as the compacted session.
    const report = await json(['compact', CLAUDE, '--context', '30000'])
    const again = await json(['inspect', out, '--context', '30000'])
    expect(again.usage.tokens).toBe(report.after.tokens)
    expect(again.messages.context).toBe(report.after.messages)
    expect(again.compactions).toBe(1)
  })

  it('--template picks the summary sections; --no-continue leaves out the continue message', async () => {
    for (const template of ['claude-code', 'hermes'] as const) {
      const report = await json(['compact', PI, '--context', '30000', '--template', template])
      expect(report.template).toBe(template)
      for (const s of TEMPLATES[template].sections.slice(0, 2)) expect(report.summary).toContain(s.heading)
    }
    const out = join(dir, 'no-continue.jsonl')
    const report = await json(['compact', PI, '--context', '30000', '--no-continue', '--out', out, '--out-format', 'messages'])
    expect(report.out).toEqual({ path: out, format: 'messages', messages: importTranscript({ path: PI }).messages.length + 2 })
    const last = JSON.parse(readFileSync(out, 'utf8').trimEnd().split('\n').pop()!) as Message
    expect(last.summary).toBe(true)
  })

  it('--if-overflow skips a session that fits; --prune prunes first', async () => {
    const skipped = await json(['compact', PI, '--if-overflow'])
    expect(skipped.status).toBe('skipped')
    expect(skipped.reason).toMatch(/does not overflow/)
    expect(skipped.after).toEqual(skipped.before)
    const human = await cli(['compact', PI, '--if-overflow'])
    expect(human.code).toBe(0)
    expect(human.stdout).toContain('skipped')

    const file = corpus('pi/pi-mono-large-session-v1.jsonl')
    const pruned = await json(['compact', file, '--context', '60000', '--prune', '--if-overflow'])
    const { session } = nativeSession(file, windowOptions(60_000))
    const expected = session.prune()
    expect(expected.tokensFreed).toBeGreaterThan(0)
    expect(pruned.pruned).toEqual({ tokensFreed: expected.tokensFreed, parts: expected.prunedPartIDs.length })
    expect(pruned.status).toBe('compacted')
  })

  it('--out writes a session store by default, and inspect reads it back', async () => {
    const out = join(dir, 'compacted-store.jsonl')
    const report = await json(['compact', PI, '--context', '30000', '--out', out])
    expect(report.out.format).toBe('store')
    expect(readFileSync(out, 'utf8').split('\n', 1)[0]).toMatch(/^\{"type":"header"/)
    const again = await json(['inspect', out])
    expect(again.format).toBe('store')
    expect(again.options.model.limit).toEqual({ context: 30_000, output: 7_500 }) // from the store's header
    expect(again.usage.tokens).toBe(report.after.tokens)
    const conv = await cli(['convert', out, '--to', 'contextfold'])
    expect(conv.stdout.trimEnd().split('\n')).toHaveLength(report.out.messages)
  })
})

/**
 * The tool-pair rule as AI SDK reads ModelMessages (what `--to ai-sdk` gives back for an AI SDK
 * transcript): the tool messages after an assistant message, one or a run, each answer some of its
 * calls; every call is answered once, unless it asks approval.
 */
function expectAiSdkRuns(msgs: ModelMessage[]): void {
  type Item = { type?: string; toolCallId?: string; approvalId?: string }
  let calls: Set<string> | undefined
  let asking = new Set<string>()
  const answered = new Set<string>()
  const close = () => {
    for (const c of calls ?? []) expect(answered.has(c) || asking.has(c), `call ${c} is answered`).toBe(true)
  }
  msgs.forEach((m, i) => {
    const items = (Array.isArray(m.content) ? m.content : []) as Item[]
    if (m.role === 'tool') {
      expect(calls, `message ${i}: a tool message follows an assistant message or its tool messages`).toBeDefined()
      const answers = items.filter((it) => it.type === 'tool-result' || it.type === 'tool-approval-response')
      expect(answers.length, `message ${i}: a tool message answers a call`).toBeGreaterThan(0)
      for (const r of answers.filter((it) => it.type === 'tool-result')) {
        expect(calls!.has(r.toolCallId!), `message ${i}: result ${r.toolCallId} answers a call`).toBe(true)
        expect(answered.has(r.toolCallId!), `call ${r.toolCallId} is answered once`).toBe(false)
        answered.add(r.toolCallId!)
      }
      return
    }
    close()
    calls = m.role === 'assistant' ? new Set(items.filter((it) => it.type === 'tool-call').map((it) => it.toolCallId!)) : undefined
    asking = new Set(items.filter((it) => it.type === 'tool-approval-request').map((it) => it.toolCallId!))
  })
  close()
}

function pick(u: ReturnType<Session['usage']>) {
  return { tokens: u.tokens, usable: u.usable, pressure: u.pressure, tier: u.tier }
}

describe('contextfold convert', () => {
  const sources = [CLAUDE, PI, corpus('codex/agentv-019ed836-small.jsonl'), corpus('claude-code/entirecli-062a8bdd-image-compaction.jsonl'), corpus('swe-agent/pydicom-1458-gpt4-textaction.traj')]

  it('--to anthropic: tool_use / tool_result pairing, alternating roles, the native conversion', async () => {
    for (const file of sources) {
      const r = await cli(['convert', file, '--to', 'anthropic'])
      expect(r.code, file).toBe(0)
      const req = JSON.parse(r.stdout) as AnthropicRequest
      expectAnthropicShape(req)
      const { session } = nativeSession(file, windowOptions())
      expect(req).toEqual(session.toModelMessages({ format: 'anthropic' }))
    }
  })

  it('--to openai: assistant tool_calls, then one role:tool message per call', async () => {
    for (const file of sources) {
      const r = await cli(['convert', file, '--to', 'openai'])
      expect(r.code, file).toBe(0)
      const msgs = JSON.parse(r.stdout) as OpenAIChatMessage[]
      expectOpenAIShape(msgs)
      expect(msgs.some((m) => m.role === 'assistant' && m.tool_calls?.length)).toBe(true)
      const { session } = nativeSession(file, windowOptions())
      expect(msgs).toEqual(session.toModelMessages({ format: 'openai' }))
    }
  })

  it('--to ai-sdk: every tool call answered by the next tool message', async () => {
    for (const file of sources) {
      const r = await cli(['convert', file, '--to', 'ai-sdk'])
      expect(r.code, file).toBe(0)
      const msgs = JSON.parse(r.stdout) as ModelMessage[]
      expectAiSdkShape(msgs)
      expect(msgs).toEqual(nativeSession(file, windowOptions()).session.toModelMessages())
    }
  })

  it('--to ai-sdk -o, then inspect: the same messages and tool calls as the original', async () => {
    // Sessions without compactions (all of their messages are the context) and without empty
    // errored answers (which are not sent, so not converted).
    for (const file of [CLAUDE, corpus('codex/agentv-019f1d64-nocompaction.jsonl')]) {
      const out = join(dir, 'round-trip.json')
      const conv = await cli(['convert', file, '--to', 'ai-sdk', '-o', out])
      expect(conv.code, file).toBe(0)
      const [original, copy] = await Promise.all([json(['inspect', file]), json(['inspect', out])])
      expect(copy.format, file).toBe('ai-sdk')
      expect(copy.messages, file).toEqual(original.messages)
      expect(copy.turns, file).toEqual(original.turns)
      expect(copy.toolCalls.total, file).toBe(original.toolCalls.total)
      expect(copy.toolCalls.completed, file).toBe(original.toolCalls.completed)
      // Calls that never got a result are sent as interrupted: they come back as errors.
      expect(copy.toolCalls.error, file).toBe(original.toolCalls.error + original.toolCalls.pending)
    }
  })

  it('inspect and convert read AI SDK UIMessages (ai-sdk-ui)', async () => {
    const imported = importTranscript({ path: UI_CHAT })
    expect(imported.format).toBe('ai-sdk-ui')
    expect(imported.warnings).toEqual([])
    const report = await json(['inspect', UI_CHAT])
    expect(report.format).toBe('ai-sdk-ui')
    expect(report.messages).toEqual({ total: 5, context: 5 })
    expect(report.toolCalls).toMatchObject({ total: 6, completed: 4, error: 2, pending: 0 })
    const forced = await json(['inspect', UI_CHAT, '--format', 'ai-sdk-ui'])
    expect(forced.messages).toEqual(report.messages)
    // Each step's calls are answered before the next step, as the AI SDK sends them.
    const msgs = (await json<{ length: number }>(['convert', UI_CHAT, '--to', 'ai-sdk'])) as unknown as ModelMessage[]
    expectAiSdkShape(msgs)
    expect(msgs.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool', 'assistant'])
    // Read back, each step is a message of its own; the calls are the same.
    const out = join(dir, 'ui-chat-model-messages.json')
    expect((await cli(['convert', UI_CHAT, '--to', 'ai-sdk', '-o', out])).code).toBe(0)
    const back = await json(['inspect', out])
    expect(back.format).toBe('ai-sdk')
    expect(back.messages).toEqual({ total: 11, context: 11 })
    expect(back.toolCalls).toEqual(report.toolCalls)
  })

  it('--format ai-sdk --to ai-sdk: a tool message that answers no call is kept, reported and not sent', async () => {
    // Issue 42's fuzz finding: an answer without content, then two tool messages of unknown items.
    const finding = join(dir, 'ai-sdk-finding.jsonl')
    writeFileSync(finding, '{"role":"assistant"}\n{"role":"tool","content":[{"":""}],"":""}{"role":"tool","content":[{"t":""}]}\n')
    const r = await cli(['convert', finding, '--format', 'ai-sdk', '--to', 'ai-sdk'])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual([{ role: 'assistant' }])
    const notSent = 'a tool message that answers no call of the assistant message before it: kept, not sent'
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `contextfold: warning: ${finding}: line 1: message content is neither a string nor an array; kept as it is`,
      `contextfold: warning: ${finding}: line 2: an AI SDK part without a type: kept as it came`,
      `contextfold: warning: ${finding}: line 2: ${notSent}`,
      `contextfold: warning: ${finding}: line 2: ${notSent}`,
    ])

    // Among tool messages that answer (an approval response, then the result), the one that
    // answers nothing is left out; the others, and an unknown item among answers, go as they came.
    const call = (id: string) => ({ type: 'tool-call', toolCallId: id, toolName: 'rm', input: {} })
    const result = (id: string) => ({ type: 'tool-result', toolCallId: id, toolName: 'rm', output: { type: 'text', value: 'ok' } })
    const sent = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [call('c1'), { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'c1' }, call('c2')] },
      { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a1', approved: true }] },
      { role: 'tool', content: [result('c1'), { type: 'mystery' }] },
      { role: 'tool', content: [result('c2')] },
      { role: 'user', content: 'next' },
    ]
    const unsent = { role: 'tool', content: [{ type: 'mystery', n: 2 }], providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }
    const file = join(dir, 'ai-sdk-run.jsonl')
    writeFileSync(file, [...sent.slice(0, 4), unsent, ...sent.slice(4)].map((m) => JSON.stringify(m)).join('\n'))
    const run = await cli(['convert', file, '--format', 'ai-sdk', '--to', 'ai-sdk'])
    expect(run.code, run.stderr).toBe(0)
    const msgs = JSON.parse(run.stdout) as ModelMessage[]
    expect(msgs).toEqual(sent)
    expectAiSdkRuns(msgs)
    expect(() => expectAiSdkRuns([...sent.slice(0, 4), unsent] as ModelMessage[])).toThrow(/answers a call/)
    expect(run.stderr.trimEnd().split('\n')).toEqual([
      `contextfold: warning: ${file}: line 4: unknown AI SDK part type "mystery": kept as it came`,
      `contextfold: warning: ${file}: line 5: ${notSent}`,
    ])
    // The message keeps it: a contextfold export holds the tool message as it came.
    const kept = (await json<{ length: number }>(['convert', file, '--format', 'ai-sdk', '--to', 'contextfold'])) as unknown as Message[]
    const entries = kept.flatMap((m) => ((m as Message & { aiSdk?: unknown }).aiSdk as Array<{ message: unknown; content: unknown }> | undefined) ?? [])
    expect(entries).toContainEqual({ message: { role: 'tool', providerOptions: unsent.providerOptions }, content: [{ raw: unsent.content[0] }] })
    // The provider shapes answer both calls.
    expectAnthropicShape((await json(['convert', file, '--format', 'ai-sdk', '--to', 'anthropic'])) as unknown as AnthropicRequest)
    expectOpenAIShape((await json<{ length: number }>(['convert', file, '--format', 'ai-sdk', '--to', 'openai'])) as unknown as OpenAIChatMessage[])
    // --json: nothing on stderr; the report of --out lists the warnings.
    const report = await json(['convert', file, '--format', 'ai-sdk', '--to', 'ai-sdk', '--out', join(dir, 'ai-sdk-run.out.json')])
    expect(report.__run.stderr).toBe('')
    expect(report.warnings).toEqual([
      { line: 4, message: 'unknown AI SDK part type "mystery": kept as it came' },
      { line: 5, message: notSent },
    ])
  })

  it('--to contextfold: every message, one per line (--json: one array)', async () => {
    const r = await cli(['convert', CLAUDE, '--to', 'contextfold'])
    expect(r.code).toBe(0)
    const lines = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Message)
    expect(lines).toEqual(importTranscript({ path: CLAUDE }).messages)
    const arr = await json<{ length: number }>(['convert', PI, '--to', 'contextfold'])
    expect(Array.isArray(arr)).toBe(true)
    expect(arr.length).toBe(importTranscript({ path: PI }).messages.length)
  })

  it('a Codex view_image result: its image counts as media, --strip-media leaves no base64 behind', async () => {
    const file = join(ROOT, '__test__', 'fixtures', 'transcripts', 'codex-view-image.jsonl')
    const report = await json(['inspect', file])
    expect(report.breakdown.media).toBe(2 * 1200)
    expect(report.breakdown.toolOutput).toBeLessThan(100)
    const plain = await cli(['convert', file, '--to', 'openai'])
    expect(plain.code).toBe(0)
    expect(plain.stdout).toContain('data:image/png;base64,')
    const stripped = await cli(['convert', file, '--to', 'openai', '--strip-media'])
    expect(stripped.code).toBe(0)
    expect(stripped.stdout).not.toContain('base64')
    expect(stripped.stdout).toContain('[Attached image/png: file]')
  })

  it('--out writes the file; --json reports it; --strip-media and --tool-output-max-chars apply', async () => {
    const out = join(dir, 'anthropic.json')
    const report = await json(['convert', CLAUDE, '--to', 'anthropic', '--out', out])
    const req = JSON.parse(readFileSync(out, 'utf8')) as AnthropicRequest
    expectAnthropicShape(req)
    expect(report).toMatchObject({ to: 'anthropic', out, format: 'claude-code', messages: 104, written: req.messages.length + (req.system ? 1 : 0) })
    expect(report.__run.stderr).toBe('')

    const file = corpus('claude-code/entirecli-062a8bdd-image-compaction.jsonl')
    const { session } = nativeSession(file, windowOptions())
    const stripped = await cli(['convert', file, '--to', 'openai', '--strip-media', '--tool-output-max-chars', '2000'])
    expect(stripped.code).toBe(0)
    expect(JSON.parse(stripped.stdout)).toEqual(session.toModelMessages({ format: 'openai', stripMedia: true, toolOutputMaxChars: 2000 }))
    expect(stripped.stdout).not.toContain('data:image/')
  })
})

describe('errors and exit codes', () => {
  it('a missing file: 3, the file named on stderr (--json: an error object on stdout)', async () => {
    const missing = join(dir, 'nope.jsonl')
    for (const cmd of [['inspect'], ['compact'], ['convert', '--to', 'openai']]) {
      const r = await cli([cmd[0]!, missing, ...cmd.slice(1)])
      expect(r.code).toBe(3)
      expect(r.stderr).toContain(missing)
      expect(r.stderr).toContain('no such file')
      expect(r.stdout).toBe('')
    }
    const j = await json(['inspect', missing], 3)
    expect(j.error).toMatchObject({ code: 'CF_NOT_FOUND', exitCode: 3, file: missing })
  })

  it('garbage, unknown JSON, a directory, an invalid contextfold message: 3', async () => {
    const garbage = join(dir, 'garbage.bin')
    writeFileSync(garbage, Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0x80, 10, 0x7f]))
    const unknown = join(dir, 'unknown.json')
    writeFileSync(unknown, '{"hello": "world", "n": [1, 2, 3]}\n')
    const invalid = join(dir, 'invalid.jsonl')
    writeFileSync(invalid, '{"id":"u1","role":"user","parts":[{"id":"p1","type":"tool","tool":"bash"}]}\n')
    const cases: Array<[string, string]> = [
      [garbage, 'CF_UNKNOWN_FORMAT'],
      [unknown, 'CF_UNKNOWN_FORMAT'],
      [dir, 'CF_IO'],
      [invalid, 'CF_INVALID_MESSAGE'],
    ]
    await Promise.all(
      cases.map(async ([file, code]) => {
        const r = await cli(['inspect', file])
        expect(r.code, file).toBe(3)
        expect(r.stderr, file).toContain(file)
        const j = await json(['inspect', file], 3)
        expect(j.error.code, file).toBe(code)
      }),
    )
    const g = await cli(['compact', garbage])
    expect(g.stderr).toMatch(/not a transcript or session contextfold can read/)
  })

  it('a wrong --format that reads no message: 3, and the hint names --format', async () => {
    for (const [file, format] of [
      [PI, 'codex'],
      [CLAUDE, 'ai-sdk-ui'],
      [UI_CHAT, 'openhands'],
      [PI, 'contextfold'],
    ] as const) {
      const r = await cli(['inspect', file, '--format', format])
      expect(r.code, format).toBe(3)
      expect(r.stderr, format).toContain(`--format ${format} does not fit this file`)
      expect(r.stderr, format).not.toContain('`format`')
      const j = await json(['convert', file, '--to', 'ai-sdk', '--format', format], 3)
      expect(j.error.code, format).toBe('CF_UNKNOWN_FORMAT')
    }
    const pi = await cli(['inspect', PI, '--format', 'codex'])
    expect(pi.stderr).toContain('it reads as pi (102 messages)')
    // The detection failure points at the flag, not at the API option.
    const unknown = join(dir, 'unknown-format.json')
    writeFileSync(unknown, '{"hello": "world"}\n')
    const u = await cli(['inspect', unknown])
    expect(u.code).toBe(3)
    expect(u.stderr).toContain('pass --format')
    expect(u.stderr).not.toContain('`format`')
    // An empty conversation read as its own format is no error.
    const empty = join(dir, 'empty-chat.json')
    writeFileSync(empty, '{"messages": []}\n')
    const e = await json(['inspect', empty, '--format', 'openai-chat'])
    expect(e.messages).toEqual({ total: 0, context: 0 })
  })

  it('a transcript that reads as no message: 3; a Gemini CLI saved chat reads, detected or with --format gemini-cli', async () => {
    const chat = join(ROOT, '__test__', 'fixtures', 'transcripts', 'gemini-cli-saved-chat.json')
    const detected = await json(['inspect', chat])
    expect(detected.format).toBe('gemini-cli')
    expect(detected.messages.total).toBe(importTranscript({ path: chat }).messages.length)
    expect(detected.compactions).toBe(1)
    expect((await json(['inspect', chat, '--format', 'gemini-cli'])).messages).toEqual(detected.messages)
    const wrong = await cli(['inspect', chat, '--format', 'openai-chat'])
    expect(wrong.code).toBe(3)
    expect(wrong.stderr).toContain('it reads as gemini-cli')
    // Records no format reads, and a detected transcript with no message.
    const unread = join(dir, 'unread-chat.json')
    writeFileSync(unread, JSON.stringify([{ role: 'robot', content: 'beep' }, { role: 'robot', content: 'boop' }]))
    const u = await json(['inspect', unread], 3)
    expect(u.error.code).toBe('CF_UNKNOWN_FORMAT')
    expect(u.error.message).toContain('it gives no message (2 records')
    const noise = join(dir, 'noise-only.jsonl')
    writeFileSync(noise, JSON.stringify({ type: 'file-history-snapshot', messageId: 'x', snapshot: {} }) + '\n')
    const n = await cli(['convert', noise, '--to', 'openai'])
    expect(n.code).toBe(3)
    expect(n.stderr).toContain('read as claude-code, it holds no messages (--format claude-code reads it as an empty conversation)')
    expect((await json(['inspect', noise, '--format', 'claude-code'])).messages).toEqual({ total: 0, context: 0 })
  })

  it('bad usage: 2', async () => {
    const cases: string[][] = [
      ['inspect', PI, '--bogus'],
      ['frobnicate', PI],
      ['inspect'],
      ['inspect', PI, '--context', 'lots'],
      ['inspect', PI, '--context', '0'],
      ['inspect', PI, '--tokenizer', 'gpt2'],
      ['inspect', PI, '--top', '-1'],
      ['convert', PI],
      ['convert', PI, '--to', 'gemini'],
      ['convert', PI, '--to', 'contextfold', '--out-format', 'messages'],
      ['convert', PI, '--to', 'contextfold', '--strip-media'],
      ['compact', PI, '--summarizer', 'magic'],
      ['compact', PI, '--summarizer', 'openai-compatible'],
      ['compact', PI, '--summarizer', 'openai-compatible', '--base-url', 'not a url', '--model', 'm'],
      ['compact', PI, '--model', 'm'],
      ['compact', PI, '--template', 'haiku'],
      ['compact', PI, '--out-format', 'messages'],
      ['inspect', PI, 'extra-argument'],
    ]
    const runs = await Promise.all(cases.map((args) => cli(args)))
    for (const [i, args] of cases.entries()) {
      const r = runs[i]!
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr, args.join(' ')).toMatch(/^contextfold: /)
      expect(r.stdout, args.join(' ')).toBe('')
    }
    const j = await json(['inspect', PI, '--bogus'], 2)
    expect(j.error).toMatchObject({ code: 'CF_USAGE', exitCode: 2 })
    // No command at all: the help, on stderr, as a usage error.
    const none = await cli([])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('Usage: contextfold')
  })

  it('an output file that cannot be written: 1', async () => {
    const r = await cli(['convert', PI, '--to', 'openai', '--out', join(dir, 'no-such-dir', 'out.json')])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('cannot write')
  })

  it('every failure: one line on stderr with a code, never a stack trace (CONTEXTFOLD_DEBUG=1 adds it)', async () => {
    const garbage = join(dir, 'stack-garbage.bin')
    writeFileSync(garbage, Buffer.from([0, 1, 2, 0xff, 10]))
    const corrupt = join(dir, 'stack-corrupt.jsonl')
    writeFileSync(corrupt, '{"type":"header","version":1}\n{"id":"u1","role":"user","parts":[{"type":"text","id":"p","text":"hi"}]}\nnot json\n')
    const invalid = join(dir, 'stack-invalid.jsonl')
    writeFileSync(invalid, '{"id":"u1","role":"user","parts":[{"id":"p1","type":"tool","tool":"bash"}]}\n')
    const failures: Array<[string[], number]> = [
      [['inspect', join(dir, 'missing.jsonl')], 3],
      [['inspect', garbage], 3],
      [['inspect', dir], 3],
      [['inspect', invalid], 3],
      [['inspect', corrupt], 3],
      [['convert', PI, '--to', 'openai', '--out', join(dir, 'no-such-dir', 'out.json')], 1],
      [['compact', PI, '--summarizer', 'openai-compatible', '--base-url', 'http://127.0.0.1:1/v1', '--model', 'm', '--no-fallback'], 1],
      [['inspect', PI, '--context', 'lots'], 2],
      [['frobnicate'], 2],
    ]
    const runs = await Promise.all(failures.map(([args]) => cli(args)))
    for (const [i, [args, code]] of failures.entries()) {
      const r = runs[i]!
      const what = args.join(' ')
      expect(r.code, what).toBe(code)
      expect(r.stderr, what).toMatch(/^contextfold: \S/)
      expect(r.stderr, what).not.toMatch(/^\s+at /m)
      // Usage errors add commander's hint line; every other failure is one line.
      if (code !== 2) expect(r.stderr.trim().split('\n'), what).toHaveLength(1)
    }
    const coded = await Promise.all(failures.map(([args]) => cli([...args, '--json'])))
    for (const [i, r] of coded.entries()) expect(JSON.parse(r.stdout).error?.code ?? JSON.parse(r.stdout).error, failures[i]![0].join(' ')).toMatch(/^CF_/)
    const debug = await cli(['compact', PI, '--summarizer', 'openai-compatible', '--base-url', 'http://127.0.0.1:1/v1', '--model', 'm', '--no-fallback'], {
      env: { CONTEXTFOLD_DEBUG: '1' },
    })
    expect(debug.code).toBe(1)
    expect(debug.stderr).toMatch(/^\s+at /m)
  })

  it('--help for every command and --version', async () => {
    const top = await cli(['--help'])
    expect(top.code).toBe(0)
    for (const cmd of ['inspect', 'compact', 'convert']) expect(top.stdout).toContain(cmd)
    expect(top.stdout).toContain('Exit codes')
    const expected: Record<string, string[]> = {
      inspect: ['--context', '--output', '--tokenizer', '--top', '--json', '--format', '--prices', '--cache-ttl'],
      compact: ['--summarizer', '--base-url', '--model', '--api-key', '--template', '--focus', '--out', '--out-format', '--json'],
      convert: ['--to', '-o, --out', '--out-format', '--strip-media', '--json'],
    }
    for (const [cmd, flags] of Object.entries(expected)) {
      const r = await cli([cmd, '--help'])
      expect(r.code, cmd).toBe(0)
      expect(r.stdout).toContain(`Usage: contextfold ${cmd}`)
      for (const f of flags) expect(r.stdout, `${cmd} ${f}`).toContain(f)
    }
    const v = await cli(['--version'])
    expect(v.code).toBe(0)
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> }
    expect(v.stdout.trim()).toBe(pkg.version)
  })

  it('the bin entry: dist/cli.js with a shebang, executable', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> }
    expect(pkg.bin).toEqual({ contextfold: 'dist/cli.js' })
    expect(readFileSync(CLI, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true)
    if (process.platform !== 'win32') {
      expect(() => accessSync(CLI, constants.X_OK)).not.toThrow()
      const r = await new Promise<Run>((resolve, reject) => {
        const child = spawn(CLI, ['--version'], { cwd: ROOT })
        let stdout = ''
        child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
        child.on('error', reject)
        child.on('close', (code) => resolve({ code, stdout, stderr: '' }))
      })
      expect(r.code).toBe(0)
      expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
    }
  })
})

describe('contextfold compact --summarizer openai-compatible (HTTP server on 127.0.0.1)', () => {
  const server = new FakeOpenAI()
  const fallback = server.fallback
  beforeAll(() => server.start())
  afterAll(() => server.close())
  beforeEach(() => {
    server.reset()
    server.fallback = fallback
  })
  const args = (...extra: string[]) => ['compact', PI, '--context', '30000', '--summarizer', 'openai-compatible', '--base-url', server.baseURL, '--model', 'summary-model', ...extra]

  it('summarizes through the endpoint: model, key, focus in the request; the answer in the summary', async () => {
    server.fallback = { text: '## Goal\n- SUMMARY-FROM-SERVER fix the API key lookup', usage: { prompt_tokens: 900, completion_tokens: 40, total_tokens: 940 } }
    const out = join(dir, 'http.jsonl')
    const report = await json([...args('--api-key', 'sk-test', '--focus', 'the settings API keys', '--out', out, '--out-format', 'messages')])
    expect(report).toMatchObject({ status: 'compacted', fallback: false, summarizer: { name: 'openai-compatible', model: 'summary-model', baseURL: server.baseURL } })
    expect(report.summary).toContain('SUMMARY-FROM-SERVER')
    expect(report.after.tokens).toBeLessThan(report.before.tokens)
    expect(server.requests.length).toBeGreaterThan(0)
    const req = server.requests[0]!
    expect(req.path).toBe('/v1/chat/completions')
    expect(req.body.model).toBe('summary-model')
    expect(req.headers.authorization).toBe('Bearer sk-test')
    expect(req.prompt).toContain('the settings API keys')
    const summary = readFileSync(out, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Message).find((m) => m.summary)
    expect(summary?.model).toMatchObject({ modelID: 'fake-model' })
  })

  it('the key comes from CONTEXTFOLD_API_KEY, then OPENAI_API_KEY', async () => {
    await json(args(), 0, { env: { CONTEXTFOLD_API_KEY: 'sk-contextfold', OPENAI_API_KEY: 'sk-openai' } })
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-contextfold')
    server.reset()
    await json(args(), 0, { env: { OPENAI_API_KEY: 'sk-openai' } })
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-openai')
  })

  it('an auth failure: exit 1, status failed, nothing written', async () => {
    server.fallback = { status: 401, body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } } }
    const out = join(dir, 'auth.jsonl')
    const report = await json(args('--api-key', 'sk-bad', '--out', out, '--out-format', 'messages'), 1)
    expect(report.status).toBe('failed')
    expect(report.error).toMatchObject({ code: 'CF_AUTH', status: 401 })
    expect(report.after).toEqual(report.before)
    expect(report.__run.stderr).toContain('CF_AUTH')
    expect(report.__run.stderr).toContain(PI)
    expect(existsSync(out)).toBe(false)
    const human = await cli(args('--api-key', 'sk-bad'))
    expect(human.code).toBe(1)
    expect(human.stdout).toContain('failed')
  })

  it('a server error falls back to the extractive summary (exit 0), or fails with --no-fallback (exit 1)', async () => {
    server.fallback = { status: 500, body: { error: { message: 'upstream exploded' } } }
    const report = await json(args())
    expect(report).toMatchObject({ status: 'compacted', fallback: true })
    expect(report.reason).toContain('CF_SERVER')
    expect(report.summary).toContain('Summary extracted without a model')
    const human = await cli(args())
    expect(human.code).toBe(0)
    expect(human.stdout).toContain('the summarizer failed')

    const strict = await json(args('--no-fallback'), 1)
    expect(strict.status).toBe('failed')
    expect(strict.error.code).toBe('CF_SERVER')
  })

  it('an unreachable endpoint: exit 1 with CF_NETWORK', async () => {
    const r = await cli(['compact', PI, '--context', '30000', '--summarizer', 'openai-compatible', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('CF_NETWORK')
  })
})
