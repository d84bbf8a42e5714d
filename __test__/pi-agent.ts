// contextfold/pi in the real pi agent: `createAgentSession` with in-memory settings and session, a
// faux model playing scripted replies (no network), the extension loaded as a user loads it (a file
// `export { default } from 'contextfold/pi'`, through pi's own loader) or as a configured factory.
// Each replies function sees the request: a summary call (contextfold's system prompt, or the
// agent's conversation ending with contextfold's instructions) or a turn.
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

import { SYSTEM_PROMPT } from '../dist/prompt.js'
import { createPiExtension } from '../dist/pi/index.js'
import { convertToLlm } from '../dist/pi/convert.js'
import { FakeOpenAI, PrefixCache, type Received } from './fake-openai.js'
import { Recorded, registerGlobally } from './tracing.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

type Any = any // eslint-disable-line @typescript-eslint/no-explicit-any

/** One pi version: its coding-agent module (with the faux helpers) and how it registers the faux model. */
export interface PiUnderTest {
  name: string
  /** The coding agent's module; `faux` holds `fauxAssistantMessage` / `fauxToolCall`. */
  pi: Any
  faux: Any
  /** Registers a faux provider `faux` and returns what `createAgentSession` needs besides it. */
  register(models: Any[], dir: string): Promise<{ handle: Any; auth: Record<string, unknown>; dispose(): void }>
  /** pi reports `reason` on `session_before_compact` (0.74+): the overflow path is tested there. */
  reasons: boolean
  /** pi's command line (its `cli.js`), run by this Node. */
  cli: string
}

const WINDOW = 6000
const SETTINGS = { compaction: { enabled: true, reserveTokens: 2000, keepRecentTokens: 600 } }

interface Call {
  summary: boolean
  /** A summary asked as the agent's own conversation (its request, then the instructions). */
  conversation: boolean
  system: string
  text: string
  /** The request's messages as the model got them (a copy), and the call's options. */
  messages: Any[]
  options: Any
  /** Tokens of the tools sent beside the messages (pi 0.73; 0.87 sends them in its system message), as the faux model counts. */
  toolTokens: number
}

/** The first words of the instructions contextfold appends to the agent's conversation. */
const INSTRUCTIONS = 'The conversation above is being compacted'

const text = (m: Any): string =>
  typeof m.content === 'string' ? m.content : (m.content as Any[]).map((c) => c.text ?? JSON.stringify(c.arguments ?? '')).join('\n')

export function piSuite(v: PiUnderTest): void {
  const dirs: string[] = []
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

  /** A project with contextfold installed (a link to this package) and the one-line extension file. */
  function project(): { cwd: string; agentDir: string; extension: string } {
    const dir = mkdtempSync(join(tmpdir(), 'contextfold-pi-'))
    dirs.push(dir)
    const cwd = join(dir, 'project')
    mkdirSync(join(cwd, 'node_modules'), { recursive: true })
    symlinkSync(ROOT, join(cwd, 'node_modules', 'contextfold'), 'junction')
    // Loaded as `pi -e` loads it (a file in .pi/extensions/ would also load next to a configured factory).
    const extension = join(cwd, 'contextfold.ts')
    writeFileSync(extension, "export { default } from 'contextfold/pi'\n")
    writeFileSync(join(cwd, 'notes.txt'), 'The deploy key lives in vault path secret/deploy.\n')
    return { cwd, agentDir: join(dir, 'agent'), extension }
  }

  /** A pi session whose model answers through `reply`, every call recorded. */
  async function start(reply: (call: Call, ctx: Any, options: Any) => Any, load: { path?: string; factory?: unknown; window?: number } = {}) {
    const { cwd, agentDir, extension } = project()
    const { pi } = v
    const { handle, auth, dispose } = await v.register([{ id: 'faux-1', contextWindow: load.window ?? WINDOW, maxTokens: 512 }], agentDir)
    const calls: Call[] = []
    const step = (ctx: Any, options: Any) => {
      // 0.73 passes the system prompt apart; 0.87 as a leading system message.
      const messages = (ctx.messages as Any[]).filter((m) => m.role !== 'system')
      const system: string = ctx.systemPrompt ?? text((ctx.messages as Any[]).find((m) => m.role === 'system') ?? { content: '' })
      const conversation = (messages.at(-1)?.role === 'user' && text(messages.at(-1)).includes(INSTRUCTIONS)) as boolean
      const call: Call = {
        summary: system === SYSTEM_PROMPT || conversation,
        conversation,
        system,
        text: messages.map(text).join('\n\n'),
        messages: JSON.parse(JSON.stringify(ctx.messages)),
        options: { sessionId: options?.sessionId },
        toolTokens: ctx.tools?.length ? Math.ceil(JSON.stringify(ctx.tools).length / 4) : 0,
      }
      calls.push(call)
      return reply(call, ctx, options)
    }
    handle.setResponses(Array.from({ length: 40 }, () => step))
    const settingsManager = pi.SettingsManager.inMemory(SETTINGS)
    const resourceLoader = new pi.DefaultResourceLoader({
      cwd,
      agentDir,
      settingsManager,
      additionalExtensionPaths: load.factory ? [] : [load.path ?? extension],
      extensionFactories: load.factory ? [load.factory] : [],
      noSkills: true,
      noContextFiles: true,
      noPromptTemplates: true,
      noThemes: true,
    })
    await resourceLoader.reload()
    const { session } = await pi.createAgentSession({
      cwd,
      agentDir,
      ...auth,
      model: handle.getModel(),
      resourceLoader,
      sessionManager: pi.SessionManager.inMemory(cwd),
      settingsManager,
      tools: ['read'],
    })
    const compactions = () => (session.sessionManager.getBranch() as Any[]).filter((e) => e.type === 'compaction')
    /** A prompt, and the threshold compaction pi 0.73 starts after it returns (from its agent_end handler). */
    const prompt = async (text: string) => {
      await session.prompt(text)
      await new Promise((r) => setTimeout(r, 0))
      while (session.isCompacting) await new Promise((r) => setTimeout(r, 5))
    }
    return {
      session,
      prompt,
      settings: settingsManager,
      calls,
      compactions,
      close: () => {
        session.dispose()
        dispose()
      },
    }
  }

  const pad = (label: string, n: number) => `${label} ` + 'padding words for the context '.repeat(n)
  const answer = (call: Call, n: number) => v.faux.fauxAssistantMessage(`answer ${n}: ` + 'lorem ipsum dolor sit amet '.repeat(60))

  describe(`contextfold/pi in pi ${v.name}`, () => {
    it('threshold and manual compactions come from contextfold: the cut, the files, the audit, the summary by the model', async () => {
      let turn = 0
      const t = await start((call, ctx) => {
        if (call.summary) return v.faux.fauxAssistantMessage(`## Goal\nSUMMARY-${turn} of the work so far.`)
        turn++
        // The first turn reads a file (a tool pair the cut must keep together).
        const last = (ctx.messages as Any[]).at(-1)
        if (turn === 1) return v.faux.fauxAssistantMessage([v.faux.fauxToolCall('read', { path: 'notes.txt' })], { stopReason: 'toolUse' })
        if (last?.role === 'toolResult') return v.faux.fauxAssistantMessage('I read notes.txt.')
        return answer(call, turn)
      })
      try {
        await t.prompt('Read notes.txt and remember: never push to main.')
        for (let i = 0; i < 10 && t.compactions().length === 0; i++) await t.prompt(pad(`question ${i}`, 40))
        const [auto] = t.compactions()
        expect(auto, 'a threshold compaction ran').toBeDefined()
        expect(auto.fromHook).toBe(true)
        expect(auto.summary).toContain('SUMMARY-')
        expect(auto.details.contextfold.version).toBe(1)
        expect(auto.details.readFiles).toContain('notes.txt')
        expect(auto.details.contextfold.files.read).toContain('notes.txt')
        // The loss audit ran: the user's constraint is kept (the model's summary did not mention it).
        const audit = auto.details.contextfold.audit
        expect([...audit.kept, ...audit.restored].map((f: Any) => f.text).join('\n')).toContain('never push to main')
        expect(auto.summary).toContain('never push to main')
        // The kept tail starts at a message that is no tool result.
        const kept = (t.session.sessionManager.getBranch() as Any[]).find((e) => e.id === auto.firstKeptEntryId)
        expect(kept?.type).toBe('message')
        expect(kept.message.role).not.toBe('toolResult')
        // The summary prompt was contextfold's, with the conversation.
        const summaryCall = t.calls.find((c) => c.summary)!
        expect(summaryCall.text).toContain('never push to main')

        // The next model call receives the summary, and the context fits the window.
        const before = t.calls.length
        await t.prompt('What was in notes.txt?')
        const next = t.calls.slice(before).find((c) => !c.summary)!
        expect(next.text).toContain('SUMMARY-')
        const usage = (t.session.messages as Any[]).filter((m) => m.role === 'assistant').at(-1).usage
        expect(usage.input + usage.cacheRead).toBeLessThan(WINDOW)

        // Manual, with instructions: they reach the summary prompt; files carry over from the entry.
        // pi's threshold check is turned off (a manual compaction always runs), and pi asks the
        // extension only when its own preparation finds something to summarize: two more turns.
        t.settings.setCompactionEnabled(false)
        await t.prompt(pad('Where is the deploy key?', 30))
        await t.prompt(pad('And the CI config?', 30))
        const count = t.compactions().length
        await t.session.compact('Focus on the deploy key location')
        const manual = t.compactions().at(-1)
        expect(t.compactions()).toHaveLength(count + 1)
        expect(manual.fromHook).toBe(true)
        expect(t.calls.filter((c) => c.summary).at(-1)!.text).toContain('Focus on the deploy key location')
        expect(manual.details.readFiles).toContain('notes.txt')
        expect(manual.summary).toContain('SUMMARY-')
      } finally {
        t.close()
      }
    })

    it('the summary is asked as the agent`s own conversation: its last request unchanged, then the instructions, read from the cache', async () => {
      const run = async (factory?: unknown) => {
        let turn = 0
        const t = await start(
          (call, ctx) => {
            if (call.summary) return v.faux.fauxAssistantMessage('## Goal\nCACHED-SUMMARY')
            turn++
            if (turn === 1) return v.faux.fauxAssistantMessage([v.faux.fauxToolCall('read', { path: 'notes.txt' })], { stopReason: 'toolUse' })
            if ((ctx.messages as Any[]).at(-1)?.role === 'toolResult') return v.faux.fauxAssistantMessage('I read notes.txt.')
            return answer(call, turn)
          },
          factory ? { factory } : {},
        )
        try {
          await t.prompt('Read notes.txt and remember: never push to main.')
          for (let i = 0; i < 10 && t.compactions().length === 0; i++) await t.prompt(pad(`question ${i}`, 40))
          const [entry] = t.compactions()
          expect(entry?.fromHook).toBe(true)
          expect(entry.summary).toContain('CACHED-SUMMARY')
          // The prompt of the agent's last call, as the faux model counted it (its uncached part and what it read).
          const branch = t.session.sessionManager.getBranch() as Any[]
          const before = branch.slice(0, branch.indexOf(entry))
          const u = before.findLast((e) => e.type === 'message' && e.message.role === 'assistant').message.usage
          const at = t.calls.findIndex((c) => c.summary)
          return { summary: t.calls[at]!, previous: t.calls[at - 1]!, usage: entry.details.contextfold.usage, prompt: u.input + u.cacheRead }
        } finally {
          t.close()
        }
      }

      const { summary, previous, usage, prompt } = await run()
      expect(summary.conversation).toBe(true)
      expect(previous.summary).toBe(false)
      // The agent's last request is the summary request's prefix, message for message (0.87: its
      // system prompt and tools included), sent with the same session id.
      expect(summary.messages.slice(0, previous.messages.length)).toEqual(previous.messages)
      expect(summary.options.sessionId).toBeTruthy()
      expect(summary.options.sessionId).toBe(previous.options.sessionId)
      // Then the answer to it (pi had not sent it yet) and the instructions.
      expect(summary.messages).toHaveLength(previous.messages.length + 2)
      expect(summary.messages.at(-2).role).toBe('assistant')
      if (summary.system) expect(summary.system).toBe(previous.system)
      // The model read that prefix from its cache: the faux model counts the prefix the session's
      // previous request shared, which is all of it but the tools it puts last (pi 0.73).
      expect(usage.cacheRead).toBeGreaterThan(0.9 * (prompt - previous.toolTokens))

      // The transcript form: contextfold's own prompt, nothing read from the agent's cache.
      const transcript = await run(createPiExtension({ summaryInput: 'transcript' }))
      expect(transcript.summary.conversation).toBe(false)
      expect(transcript.summary.system).toBe(SYSTEM_PROMPT)
      expect(transcript.usage.cacheRead ?? 0).toBeLessThan(0.1 * transcript.prompt)
    })

    it('pi -p (print mode, with and without -c): threshold compactions are summarized by the model', async () => {
      // pi's own command line, as a user runs it, against an OpenAI-compatible endpoint on 127.0.0.1.
      // Print mode disposes the runtime when the prompt returns, while the compaction it started runs on.
      const server = new FakeOpenAI()
      server.cache = new PrefixCache()
      const isSummary = (r: Received) => JSON.stringify(r.body.messages.at(-1)).includes(INSTRUCTIONS) || JSON.stringify(r.body.messages[0]).includes(SYSTEM_PROMPT.slice(0, 60))
      server.fallback = (r) => (isSummary(r) ? { text: '## Goal\nPRINT-SUMMARY of the work.' } : { text: 'answer: ' + 'lorem ipsum dolor sit amet '.repeat(60) })
      await server.start()
      const { cwd, agentDir, extension } = project()
      try {
        mkdirSync(agentDir, { recursive: true })
        const model = { id: 'fake-1', contextWindow: WINDOW, maxTokens: 512, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }
        const provider = { baseUrl: server.baseURL, api: 'openai-completions', apiKey: 'fake-key', compat: { supportsDeveloperRole: false, supportsReasoningEffort: false }, models: [model] }
        writeFileSync(join(agentDir, 'models.json'), JSON.stringify({ providers: { fake: provider } }))
        writeFileSync(join(agentDir, 'settings.json'), JSON.stringify({ ...SETTINGS, defaultProvider: 'fake', defaultModel: 'fake-1' }))
        const env = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: '1', PI_SKIP_VERSION_CHECK: '1' }
        // stdin closed: pi reads a piped stdin as part of the prompt.
        const pi = (...args: string[]) =>
          new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
            const child = spawn(process.execPath, [v.cli, '-e', extension, '--no-tools', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
            let stdout = ''
            let stderr = ''
            child.stdout.on('data', (d: Buffer) => (stdout += d))
            child.stderr.on('data', (d: Buffer) => (stderr += d))
            child.on('error', reject)
            child.on('exit', (code) => (code === 0 ? resolve({ stdout, stderr }) : reject(new Error(`pi exited with ${code}: ${stderr}`))))
          })
        const entries = (): Any[] => {
          const dir = join(agentDir, 'sessions')
          const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl'))
          expect(files).toHaveLength(1)
          return readFileSync(join(dir, files[0]!), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
        }
        const compactions = () => entries().filter((e) => e.type === 'compaction')
        const prompts = (label: string, n: number) => Array.from({ length: n }, (_, i) => pad(`${label} ${i}: remember, never push to main.`, 150))
        /** After a run: it ended on a compaction, and every compaction's summary is the model's. */
        const summarizedByTheModel = () => {
          const all = entries()
          expect(all.at(-1).type).toBe('compaction')
          for (const c of all.filter((e) => e.type === 'compaction')) {
            expect(c.fromHook).toBe(true)
            expect(c.details.contextfold.reason).toBeUndefined()
            expect(c.details.contextfold.fallback).toBe(false)
            expect(c.summary).toContain('PRINT-SUMMARY')
          }
        }
        // A new session, then the same one continued (`-c`): each run ends on the threshold
        // compaction pi starts after its last prompt, which runs after print mode disposed the runtime.
        const out = await pi('-p', ...prompts('first run', 4))
        expect(out.stdout).toContain('answer:')
        summarizedByTheModel()
        const first = compactions().length
        await pi('-p', '-c', ...prompts('second run', 3))
        summarizedByTheModel()
        expect(compactions().length).toBeGreaterThan(first)
        // (A compaction that splits a turn asks for the turn's prefix too.)
        expect(server.requests.filter(isSummary).length).toBeGreaterThanOrEqual(compactions().length)
      } finally {
        await server.close()
      }
    })

    it('converts the agent`s messages for the model as pi does', () => {
      const t = 1_700_000_000_000
      const messages = [
        { role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: t },
        { role: 'assistant', content: [{ type: 'text', text: 'hello' }], timestamp: t + 1 },
        { role: 'bashExecution', command: 'make', output: 'ok', exitCode: 2, cancelled: false, truncated: true, fullOutputPath: '/tmp/out', timestamp: t + 2 },
        { role: 'bashExecution', command: 'ls', output: '', exitCode: 0, cancelled: true, timestamp: t + 3 },
        { role: 'bashExecution', command: 'secret', output: 'x', exitCode: 0, excludeFromContext: true, timestamp: t + 4 },
        { role: 'custom', customType: 'note', content: 'a note', display: true, timestamp: t + 5 },
        { role: 'custom', customType: 'note', content: [{ type: 'text', text: 'parts' }], display: false, timestamp: t + 6 },
        { role: 'branchSummary', summary: 'the branch', fromId: 'e1', timestamp: t + 7 },
        { role: 'compactionSummary', summary: 'the summary', tokensBefore: 10, timestamp: t + 8 },
        { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: [{ type: 'text', text: 'file' }], isError: false, timestamp: t + 9 },
      ]
      expect(convertToLlm(messages)).toEqual(v.pi.convertToLlm(messages))
    })

    /** Three turns, then `/compact`: the compaction recorded is the extractive summary, for `reason`. */
    async function compactsOffline(t: Awaited<ReturnType<typeof start>>, reason: RegExp) {
      try {
        await t.prompt(pad('Set up the build, do not touch CI config.', 30))
        await t.prompt(pad('second', 30))
        await t.prompt(pad('third', 30))
        const result = await t.session.compact()
        expect(result.summary).toContain('do not touch CI config')
        const [entry] = t.compactions()
        expect(entry.fromHook).toBe(true)
        expect(entry.details.contextfold.fallback).toBe(true)
        expect(entry.details.contextfold.reason).toMatch(reason)
      } finally {
        t.close()
      }
    }

    it('a failed summary call gives the extractive summary, not a failed compaction', async () => {
      const failing = (call: Call) =>
        call.summary
          ? v.faux.fauxAssistantMessage('', { stopReason: 'error', errorMessage: '500 Internal Server Error: overloaded' })
          : answer(call, 0)
      await compactsOffline(await start(failing, { factory: createPiExtension() }), /500/)
    })

    it('a summarizer failure compact() allows no fallback for (HTTP 401) is still compacted, offline', async () => {
      const summarizer = async () => {
        throw Object.assign(new Error('invalid x-api-key'), { status: 401 })
      }
      const t = await start((call) => answer(call, 0), { factory: createPiExtension({ summarizer }) })
      await compactsOffline(t, /^CF_AUTH: invalid x-api-key \(used the extractive summary\)$/)
    })

    it('a contextfold summarizer writes the summary instead of the model', async () => {
      const asked: string[] = []
      const t = await start((call) => answer(call, 0), {
        factory: createPiExtension({
          summarizer: async (req) => {
            asked.push(req.prompt)
            return { text: '## Goal\nWRITTEN-BY-SUMMARIZER', finishReason: 'stop', model: { providerID: 'own', modelID: 'summarizer-1' } }
          },
        }),
      })
      try {
        await t.prompt(pad('Port the parser to Rust.', 30))
        await t.prompt(pad('second', 30))
        await t.prompt(pad('third', 30))
        await t.session.compact('only the parser')
        const [entry] = t.compactions()
        expect(entry.summary).toContain('WRITTEN-BY-SUMMARIZER')
        expect(entry.details.contextfold.model).toEqual({ providerID: 'own', modelID: 'summarizer-1' })
        expect(asked.join('\n')).toContain('only the parser')
        expect(t.calls.some((c) => c.summary)).toBe(false)
      } finally {
        t.close()
      }
    })

    it('an aborted compaction leaves the session as it was', async () => {
      let summaryStarted!: () => void
      const started = new Promise<void>((r) => (summaryStarted = r))
      const t = await start(
        (call, _ctx, options) => {
          if (!call.summary) return answer(call, 0)
          summaryStarted()
          // The summary never comes: only the abort ends the call.
          return new Promise((resolve) =>
            options.signal.addEventListener('abort', () => resolve(v.faux.fauxAssistantMessage('', { stopReason: 'aborted' })), { once: true }),
          )
        },
        { factory: createPiExtension() },
      )
      try {
        await t.prompt(pad('first', 30))
        await t.prompt(pad('second', 30))
        const entries = JSON.stringify(t.session.sessionManager.getEntries())
        const messages = t.session.messages.length
        const compacting = t.session.compact()
        await started
        t.session.abortCompaction()
        await expect(compacting).rejects.toThrow()
        expect(JSON.stringify(t.session.sessionManager.getEntries())).toBe(entries)
        expect(t.session.messages).toHaveLength(messages)
        expect(t.compactions()).toHaveLength(0)
      } finally {
        t.close()
      }
    })

    it('with prune (the cache policy), old tool output reaches the model as a marker while the session keeps it', async () => {
      let turn = 0
      const t = await start(
        (call, ctx) => {
          const last = (ctx.messages as Any[]).at(-1)
          if (last?.role === 'toolResult') return v.faux.fauxAssistantMessage('I read big.txt.')
          turn++
          if (turn === 1) return v.faux.fauxAssistantMessage([v.faux.fauxToolCall('read', { path: 'big.txt' })], { stopReason: 'toolUse' })
          return v.faux.fauxAssistantMessage(`answer ${turn}`)
        },
        { factory: createPiExtension({ prune: { pruneProtect: 100, pruneMinimum: 0 } }) },
      )
      try {
        t.settings.setCompactionEnabled(false)
        writeFileSync(join(t.session.sessionManager.getCwd(), 'big.txt'), 'BIG-LINE of the file\n'.repeat(300))
        await t.prompt('Read big.txt')
        for (const q of ['second', 'third', 'fourth']) await t.prompt(q)
        const last = t.calls.at(-1)!
        expect(last.text).toContain('[Old tool result content cleared]')
        expect(last.text).not.toContain('BIG-LINE')
        // The first calls saw the output; once cleared it stays cleared, so later calls share their prefix.
        expect(t.calls.some((c) => c.text.includes('BIG-LINE'))).toBe(true)
        const first = t.calls.findIndex((c) => c.text.includes('[Old tool result content cleared]'))
        for (const c of t.calls.slice(first)) expect(c.text).not.toContain('BIG-LINE')
        const result = (t.session.messages as Any[]).find((m) => m.role === 'toolResult')
        expect(text(result)).toContain('BIG-LINE')
      } finally {
        t.close()
      }
    })

    it('prune: true in a 32k window: 24 reads of one prompt (120k tokens) are cleared as they age, every call fits', async () => {
      const READS = 24
      const t = await start(
        (call, ctx) => {
          const done = (ctx.messages as Any[]).filter((m) => m.role === 'toolResult').length
          if (done < READS) return v.faux.fauxAssistantMessage([v.faux.fauxToolCall('read', { path: `src/f${done}.txt` })], { stopReason: 'toolUse' })
          return v.faux.fauxAssistantMessage('Read them all.')
        },
        { factory: createPiExtension({ prune: true }), window: 32_000 },
      )
      try {
        t.settings.setCompactionEnabled(false)
        const src = join(t.session.sessionManager.getCwd(), 'src')
        mkdirSync(src)
        // 20,000 characters each: 5,000 tokens as pi estimates them.
        for (let i = 0; i < READS; i++) writeFileSync(join(src, `f${i}.txt`), `FILE-${i} ` + `line ${i} of the module\n`.repeat(1_000).slice(0, 19_990))
        await t.prompt('Read every file under src/, one at a time.')
        expect(t.calls).toHaveLength(READS + 1)
        // The defaults scaled to the window (6,400 tokens and 2 answers protected in 32k): old reads
        // are cleared, so no call carries more than the window.
        for (const c of t.calls) expect(Math.ceil(c.text.length / 4)).toBeLessThan(32_000 - 512)
        const last = t.calls.at(-1)!
        expect(last.text).toContain('[Old tool result content cleared]')
        expect(last.text).not.toContain('FILE-0 ')
        // The newest output always reaches the model whole.
        for (let i = 1; i <= READS; i++) expect(t.calls[i]!.text).toContain(`FILE-${i - 1} `)
        // pi's session keeps every output.
        expect((t.session.messages as Any[]).filter((m) => m.role === 'toolResult' && text(m).includes('FILE-'))).toHaveLength(READS)
      } finally {
        t.close()
      }
    })

    it('a read larger than an 8k window reaches the model cut to fit (head and tail, the marker), the same cut in every later call; the session keeps it whole', async () => {
      const WINDOW_8K = 8_000
      const warnings: string[] = []
      let turn = 0
      const t = await start(
        (call, ctx) => {
          if ((ctx.messages as Any[]).at(-1)?.role === 'toolResult') return v.faux.fauxAssistantMessage('I read big.txt.')
          turn++
          if (turn === 1) return v.faux.fauxAssistantMessage([v.faux.fauxToolCall('read', { path: 'big.txt' })], { stopReason: 'toolUse' })
          return v.faux.fauxAssistantMessage(`answer ${turn}`)
        },
        { factory: createPiExtension({ onWarning: (w) => warnings.push(w.message) }), window: WINDOW_8K },
      )
      try {
        t.settings.setCompactionEnabled(false)
        // 400 lines of 100 characters (under pi's read limits): about 10,000 tokens as pi estimates them.
        const lines = Array.from({ length: 400 }, (_, i) => `${i === 0 ? 'FIRST-LINE' : i === 399 ? 'LAST-LINE' : `line ${i}`} `.padEnd(99, '.'))
        writeFileSync(join(t.session.sessionManager.getCwd(), 'big.txt'), lines.join('\n') + '\n')
        await t.prompt('Read big.txt')
        await t.prompt('What is on its last line?')
        expect(t.calls).toHaveLength(3)
        for (const c of t.calls) expect(Math.ceil(c.text.length / 4)).toBeLessThan(WINDOW_8K - 512)
        const read = (c: Call) => text((c.messages as Any[]).find((m) => m.role === 'toolResult'))
        // The model reads the file's head and tail, and how much was left out.
        expect(read(t.calls[1]!)).toContain('FIRST-LINE')
        expect(read(t.calls[1]!)).toContain('LAST-LINE')
        expect(read(t.calls[1]!)).toMatch(/omitted \d+ chars/)
        // Later calls send the same cut: the provider reads the prefix from its cache.
        expect(read(t.calls[2]!)).toBe(read(t.calls[1]!))
        expect(warnings).toHaveLength(1)
        expect(warnings[0]).toMatch(/^a tool output the model had not read yet would not fit the window: cut to fit/)
        // pi's session keeps the whole output.
        expect(text((t.session.messages as Any[]).find((m) => m.role === 'toolResult'))).toContain('line 200 ')
      } finally {
        t.close()
      }
    })

    it('an overflow right after a large read: the compaction keeps the result the model has not read, and the retried call has it beside the summary', async () => {
      let turn = 0
      let rejected = false
      const t = await start(
        (call, ctx) => {
          if (call.summary) return v.faux.fauxAssistantMessage('## Goal\nOVERFLOW-SUMMARY')
          if ((ctx.messages as Any[]).at(-1)?.role === 'toolResult') {
            // The provider rejects the first call that carries the read: the history before it is long.
            if (!rejected) {
              rejected = true
              return v.faux.fauxAssistantMessage('', { stopReason: 'error', errorMessage: 'prompt is too long: 13000 tokens > 12000 maximum' })
            }
            return v.faux.fauxAssistantMessage('I read notes.txt.')
          }
          turn++
          if (turn === 3) return v.faux.fauxAssistantMessage([v.faux.fauxToolCall('read', { path: 'big.txt' })], { stopReason: 'toolUse' })
          return answer(call, turn)
        },
        { factory: createPiExtension(), window: 12_000 },
      )
      try {
        writeFileSync(join(t.session.sessionManager.getCwd(), 'big.txt'), 'READ-HEAD ' + 'content of the file\n'.repeat(800) + 'READ-END\n')
        await t.prompt(pad('first', 40))
        await t.prompt(pad('second', 40))
        let retriedAnswer!: () => void
        const answered = new Promise<void>((r) => (retriedAnswer = r))
        t.session.subscribe((e: Any) => {
          if (e.type === 'agent_end' && rejected && t.calls.at(-1)?.text.includes('OVERFLOW-SUMMARY')) retriedAnswer()
        })
        await t.prompt('Now read big.txt')
        await answered
        const [entry] = t.compactions()
        expect(entry.fromHook).toBe(true)
        // The retried call: the summary, then the read the model never got to see, then its answer.
        const retried = t.calls.filter((c) => !c.summary).at(-1)!
        expect(retried.text).toContain('OVERFLOW-SUMMARY')
        expect(retried.text).toContain('READ-HEAD')
        expect(retried.text).toContain('READ-END')
      } finally {
        t.close()
      }
    })

    it('OpenTelemetry: a contextfold.compact span per compaction with its summary call under it, a prune span per prune', async () => {
      const recorded = new Recorded()
      const unregister = registerGlobally(recorded)
      let turn = 0
      const t = await start(
        (call, ctx) => {
          if (call.summary) return v.faux.fauxAssistantMessage('## Goal\nTRACED-SUMMARY')
          turn++
          if ((ctx.messages as Any[]).at(-1)?.role === 'toolResult') return v.faux.fauxAssistantMessage('I read big.txt.')
          if (turn === 1) return v.faux.fauxAssistantMessage([v.faux.fauxToolCall('read', { path: 'big.txt' })], { stopReason: 'toolUse' })
          return answer(call, turn)
        },
        { factory: createPiExtension({ prune: { pruneProtect: 100, pruneMinimum: 0 } }) },
      )
      try {
        writeFileSync(join(t.session.sessionManager.getCwd(), 'big.txt'), 'BIG-LINE of the file\n'.repeat(300))
        await t.prompt('Read big.txt and remember: never push to main.')
        for (let i = 0; i < 10 && t.compactions().length === 0; i++) await t.prompt(pad(`question ${i}`, 40))
        const entries = t.compactions()
        expect(entries.length).toBeGreaterThan(0)
        const spans = recorded.named('contextfold.compact')
        expect(spans).toHaveLength(entries.length)
        const id = t.session.sessionManager.getSessionId()
        spans.forEach((span, i) => {
          const ours = entries[i].details.contextfold
          expect(span.attributes).toMatchObject({
            'contextfold.integration': 'pi',
            'gen_ai.conversation.id': id,
            // pi 0.74+ says why it compacts.
            'contextfold.trigger': v.reasons ? 'threshold' : 'unknown',
            'contextfold.status': 'compacted',
            'gen_ai.conversation.compacted': true,
            'contextfold.tokens.after': ours.tokensAfter,
            'contextfold.messages.summarized': ours.summarized,
            'contextfold.fallback': false,
            'contextfold.audit.kept': ours.audit.kept.length,
            'contextfold.audit.restored': ours.audit.restored.length,
            'contextfold.audit.dropped': ours.audit.dropped.length,
          })
          expect(span.attributes['contextfold.tokens.before']).toBeGreaterThan(ours.tokensAfter)
          // The session's model wrote the summary (asked as the agent's conversation), under the compaction's span.
          const calls = recorded.children(span)
          expect(calls.map((c) => c.name)).toEqual(['contextfold.summarize'])
          expect(calls[0]!.attributes).toMatchObject({ 'contextfold.summary.kind': 'summary', 'contextfold.summary.input': 'conversation', 'gen_ai.response.model': 'faux-1' })
        })
        // pi's `context` event runs under no span: each prune is a span of its own with the event.
        const prunes = recorded.named('contextfold.prune')
        expect(prunes.length).toBeGreaterThan(0)
        for (const p of prunes) {
          expect(p.attributes).toMatchObject({ 'contextfold.integration': 'pi', 'gen_ai.conversation.id': id })
          const [event, ...more] = p.events
          expect(more).toEqual([])
          expect(event!.attributes).toMatchObject({ 'contextfold.prune.policy': 'cache' })
          expect(event!.attributes!['contextfold.prune.tokens_freed']).toBeGreaterThan(0)
          expect(event!.attributes!['contextfold.prune.parts_cleared']).toBe(1)
        }
      } finally {
        t.close()
        unregister()
      }
    })

    it('protectFirstTurns: the first turn is never summarized and is sent before the summary', async () => {
      let turn = 0
      const t = await start(
        (call) => {
          if (call.summary) return v.faux.fauxAssistantMessage(`## Goal\nHEAD-SUMMARY-${turn}`)
          turn++
          return answer(call, turn)
        },
        { factory: createPiExtension({ protectFirstTurns: 1 }) },
      )
      try {
        await t.prompt('FIRST-TURN: the project rules are in RULES.md.')
        for (let i = 0; i < 16 && t.compactions().length < 2; i++) await t.prompt(pad(`question ${i}`, 40))
        expect(t.compactions()).toHaveLength(2)
        for (const c of t.compactions()) expect(c.details.contextfold.head).toHaveLength(2) // the request and its answer
        // Neither summary covers the head: a transcript leaves it out, the agent's conversation (which
        // sent it) is told it stays verbatim. Every call after a compaction sent it, before the summary.
        const summaries = t.calls.filter((c) => c.summary)
        expect(summaries.length).toBeGreaterThanOrEqual(2)
        for (const c of summaries) {
          if (c.conversation) expect(text(c.messages.at(-1))).toContain('The first 2 messages above stay in the context verbatim')
          else expect(c.text).not.toContain('FIRST-TURN')
        }
        await t.prompt('next')
        const last = t.calls.at(-1)!
        expect(last.text.indexOf('FIRST-TURN')).toBeGreaterThanOrEqual(0)
        expect(last.text.indexOf('FIRST-TURN')).toBeLessThan(last.text.indexOf('HEAD-SUMMARY-'))
      } finally {
        t.close()
      }
    })

    it('an overflow compaction comes from contextfold, and the retried call gets the summary', async () => {
      let turn = 0
      const reasons: string[] = []
      const told: string[] = []
      const t = await start(
        (call) => {
          if (call.summary) return v.faux.fauxAssistantMessage('## Goal\nOVERFLOW-SUMMARY')
          turn++
          if (turn === 3) return v.faux.fauxAssistantMessage('', { stopReason: 'error', errorMessage: 'prompt is too long: 9000 tokens > 6000 maximum' })
          return answer(call, turn)
        },
        { factory: createPiExtension({ onCompaction: (e) => e.reason && told.push(e.reason) }) },
      )
      try {
        await t.prompt(pad('first', 20))
        await t.prompt(pad('second', 20))
        // The overflow compaction and the retry run after the prompt returns (0.73): wait for the retried answer.
        let retriedAnswer!: () => void
        const answered = new Promise<void>((r) => (retriedAnswer = r))
        t.session.subscribe((e: Any) => {
          if (e.type === 'compaction_start') reasons.push(e.reason)
          if (e.type === 'agent_end' && reasons.length && turn > 3) retriedAnswer()
        })
        await t.prompt(pad('third', 20))
        await answered
        expect(reasons).toEqual(['overflow'])
        // pi 0.74+ tells the extension why it compacts.
        if (v.reasons) expect(told).toEqual(['overflow'])
        const [entry] = t.compactions()
        expect(entry.fromHook).toBe(true)
        expect(entry.summary).toContain('OVERFLOW-SUMMARY')
        const retried = t.calls.filter((c) => !c.summary).at(-1)!
        expect(retried.text).toContain('OVERFLOW-SUMMARY')
      } finally {
        t.close()
      }
    })
  })
}
