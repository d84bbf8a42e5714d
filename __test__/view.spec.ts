// `contextfold view` in a real browser: playwright-core driving Debian's chromium (a missing
// chromium fails the spec: `apt-get install -y chromium`), against the served page and the `--out`
// file, on corpus transcripts (several compactions; images) and on a session in a Redis store made
// by `compact()` (one compaction falling back to the extractive summary). Each page: no console
// error, no request beyond 127.0.0.1 and file:, every integer of `inspect --json` in its text, a
// compaction that opens on its summary and audit, a search that finds a message.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { Session, compact, extractiveSummarizer, importTranscript, type Message, type SessionOptions, type Summarizer } from '../dist/index.js'
import type { ViewData } from '../dist/cli/view/data.js'
import { openStore, startBackend } from './backends.mjs'
import { CLI, ROOT, cli } from './cli-run.js'

const corpus = (file: string) => join(ROOT, '..', 'shared', 'corpus', file)
const CHROMIUM = '/usr/bin/chromium'
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync']

async function inspect(args: string[]): Promise<Record<string, any>> {
  const run = await cli(['inspect', ...args, '--json'])
  if (run.code !== 0) throw new Error(`inspect exited ${run.code}: ${run.stderr}`)
  return JSON.parse(run.stdout)
}

/** `view` serving: the URL it prints, and a stop that sends Ctrl-C and resolves to the exit code. */
async function serve(args: string[]): Promise<{ url: string; stop: () => Promise<number | null>; stderr: () => string }> {
  const child = spawn(process.execPath, [CLI, 'view', ...args, '--no-progress'], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve))
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
      const m = /http:\/\/127\.0\.0\.1:\d+\//.exec(stdout)
      if (m) resolve(m[0])
    })
    void closed.then((code) => reject(new Error(`view exited ${code} before serving: ${stderr}`)))
  })
  return {
    url,
    stderr: () => stderr,
    stop: () => {
      child.kill('SIGINT')
      return closed
    },
  }
}

/** Every integer of `value` (the report of `inspect --json`), but the session options it echoes. */
function integers(value: unknown, path = '', out: Array<[string, number]> = []): Array<[string, number]> {
  if (typeof value === 'number') {
    if (Number.isInteger(value)) out.push([path, value])
  } else if (Array.isArray(value)) value.forEach((v, i) => integers(v, `${path}[${i}]`, out))
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (path === '' && (k === 'options' || k === 'warnings')) continue
      integers(v, path ? `${path}.${k}` : k, out)
    }
  }
  return out
}

let dir: string
let context: BrowserContext

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`)
  dir = mkdtempSync(join(tmpdir(), 'contextfold-view-'))
  context = await chromium.launchPersistentContext(join(dir, 'profile'), { executablePath: CHROMIUM, headless: true, args: FLAGS })
})

afterAll(async () => {
  await context?.close()
  rmSync(dir, { recursive: true, force: true })
})

interface Opened {
  page: Page
  data: ViewData
  errors: string[]
  requests: string[]
}

async function open(url: string): Promise<Opened> {
  const page = await context.newPage()
  const errors: string[] = []
  const requests: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text())
  })
  page.on('pageerror', (e) => errors.push(e.message))
  page.on('request', (r) => requests.push(r.url()))
  await page.goto(url)
  await page.waitForFunction('window.contextfoldReady === true')
  const data = (await page.evaluate("JSON.parse(document.getElementById('cf-data').textContent)")) as ViewData
  return { page, data, errors, requests }
}

/** What every page must do, whatever its input. */
async function checkPage(o: Opened, report: Record<string, any>, origin: string): Promise<void> {
  const { page, data } = o
  expect(data.report).toEqual(report)
  const text = await page.locator('main').innerText()
  const missing = integers(report).filter(([, n]) => !text.includes(n.toLocaleString('en-US')))
  expect(missing, 'integers of inspect --json absent from the page').toEqual([])

  // A compaction opens on its summary and its audit.
  if (data.compactions.length > 0) {
    const c = data.compactions[data.compactions.length - 1]!
    await page.locator('table.compactions tbody tr').nth(c.n - 1).click()
    const detail = page.locator('#compaction-detail')
    await expect.poll(() => detail.innerText()).toContain(`Compaction C${c.n}`)
    const shown = await detail.innerText()
    expect(shown).toContain(c.text.trim().split('\n')[0]!.slice(0, 60))
    expect(shown).toContain(`${c.tokensBefore.toLocaleString('en-US')} → ${c.tokensAfter.toLocaleString('en-US')}`)
    expect(shown).toContain('Loss audit')
    if (c.audit) {
      expect(shown).toContain(`Kept (${c.audit.kept.length})`)
      expect(shown).toContain(`Restored into ## Preserved (${c.audit.restored.length})`)
      for (const f of [...c.audit.kept, ...c.audit.restored].slice(0, 3)) expect(shown).toContain(f.text.slice(0, 40))
    }
    // The flag on the timeline opens it too.
    await page.locator(`g.compaction-flag[data-compaction="1"]`).click()
    await expect.poll(() => detail.innerText()).toContain('Compaction C1')
  }

  // Search finds a message by words of its text: one hidden by a compaction when there is one.
  const target =
    data.messages.findIndex((m) => !m.context && m.parts.some((p) => p.type === 'text' && p.text.trim().length > 40)) >= 0
      ? data.messages.findIndex((m) => !m.context && m.parts.some((p) => p.type === 'text' && p.text.trim().length > 40))
      : data.messages.findIndex((m) => m.parts.some((p) => p.type === 'text' && p.text.trim().length > 40))
  expect(target).toBeGreaterThanOrEqual(0)
  const body = (data.messages[target]!.parts.find((p) => p.type === 'text' && p.text.trim().length > 40) as { text: string }).text
  // Words of one line as they stand (the search reads the text, not a normalized copy of it).
  const line = body.split('\n').find((l) => l.trim().length >= 20) ?? body
  const words = line.trim().slice(0, 48).trim()
  await page.locator('#messages input[type=search]').fill(words)
  const row = page.locator(`#messages .row[data-index="${target}"]`)
  await row.waitFor()
  await row.click()
  const detail = await page.locator('#messages .message-detail').innerText()
  expect(detail).toContain(data.messages[target]!.id)
  if (!data.messages[target]!.context) expect(detail).toContain('Hidden')

  expect(o.errors).toEqual([])
  const outside = o.requests.filter((u) => !u.startsWith(origin) && !u.startsWith('data:'))
  expect(outside).toEqual([])
  await page.close()
}

/** The `--out` file and the served page of `args`, each checked against `inspect --json`. */
async function checkBoth(name: string, args: string[]): Promise<ViewData> {
  const report = await inspect(args)
  const out = join(dir, `${name}.html`)
  const written = await cli(['view', ...args, '--out', out, '--no-progress'])
  expect(written.code, written.stderr).toBe(0)
  expect(written.stdout).toContain(out)
  const file = await open(pathToFileURL(out).href)
  const data = file.data
  await checkPage(file, report, 'file:')

  const served = await serve(args)
  try {
    const res = await fetch(served.url)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(await res.text(), 'the served page is the --out file').toBe(readFileSync(out, 'utf8'))
    expect((await fetch(new URL('/other', served.url))).status).toBe(404)
    await checkPage(await open(served.url), report, served.url)
  } finally {
    expect(await served.stop(), served.stderr()).toBe(0)
  }
  return data
}

describe('contextfold view', () => {
  it('a Codex session with three compactions and its recorded system prompt', async () => {
    const data = await checkBoth('codex', [corpus('codex/agentv-019ed99c-3compactions.jsonl')])
    expect(data.compactions.length).toBeGreaterThanOrEqual(3)
    expect(data.report.sent.source.system).toBe('transcript')
    expect(data.calls.some((c) => c.source === 'usage')).toBe(true)
  })

  it('a pi session with images and compactions', async () => {
    const data = await checkBoth('pi-images', [corpus('pi/pi-mono-compact-with-images-v1.jsonl'), '--context', '100k'])
    expect(data.compactions.length).toBeGreaterThanOrEqual(2)
    // The images (attached to tool results here) are drawn from their data: URLs.
    const withImage = data.messages.findIndex((m) => m.parts.some((p) => p.type === 'tool' && p.attachments?.some((f) => f.mime.startsWith('image/'))))
    expect(withImage).toBeGreaterThanOrEqual(0)
    const { page } = await open(pathToFileURL(join(dir, 'pi-images.html')).href)
    await page.locator('#messages input[type=search]').fill(data.messages[withImage]!.id)
    await page.locator(`#messages .row[data-index="${withImage}"]`).click()
    const src = await page.locator('#messages .message-detail img').first().getAttribute('src')
    expect(src).toMatch(/^data:image\/png;base64,/)
    expect(await page.locator('#messages .message-detail img').first().evaluate((img: any) => img.complete === true && img.naturalWidth > 0)).toBe(true)
    await page.close()
  })

  it('a session in Redis compacted by compact(), one compaction a fallback, with prices', async () => {
    const backend = await startBackend('redis')
    try {
      const options: SessionOptions = { model: { providerID: 'test', modelID: 'test-model', limit: { context: 40_000, output: 4_000 } }, tokenizer: 'estimate' }
      const store = await openStore('redis', backend.target, 'view-1', { session: options })
      const session = new Session(options)
      const extractive = extractiveSummarizer()
      let calls = 0
      // The second summary call fails as a server error would: the extractive summary is used.
      const summarizer: Summarizer = async (req, signal) => {
        calls++
        if (calls === 2) throw Object.assign(new Error('upstream returned 502'), { status: 502 })
        const out = await extractive(req, signal)
        return { ...out, usage: { input: 20_000, output: 1_500 }, model: { providerID: 'test', modelID: 'summary-model' } }
      }
      const messages: Message[] = importTranscript({ path: corpus('pi/pi-mono-large-session-v1.jsonl') }).messages.slice(0, 400)
      for (const m of messages) {
        session.append(m)
        await store.append(m)
        if (session.isOverflow()) {
          const result = await compact(session, { summarizer, auto: true, overflow: true })
          for (const x of result.messages ?? []) await store.append(x)
        }
      }
      await store.close()
      const data = await checkBoth('redis', [backend.target, '--session', 'view-1', '--prices', '3,15'])
      expect(data.report.format).toBe('store')
      expect(data.compactions.length).toBeGreaterThanOrEqual(2)
      const fallback = data.compactions.find((c) => c.fallback)
      expect(fallback?.fallback).toContain('502')
      expect(data.compactions.filter((c) => c.recorded && c.audit).length).toBe(data.compactions.length)
      expect(data.compactions.find((c) => !c.fallback)?.cost).toBeCloseTo((20_000 * 3 + 1_500 * 15) / 1e6, 9)
    } finally {
      await backend.stop()
    }
  })

  it('bad usage: --port with --out, a port out of range', async () => {
    const both = await cli(['view', corpus('claude-code/entirecli-5a3bb1c8-tiny.jsonl'), '--port', '8080', '--out', join(dir, 'x.html')])
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('--port')
    const range = await cli(['view', corpus('claude-code/entirecli-5a3bb1c8-tiny.jsonl'), '--port', '70000'])
    expect(range.code).toBe(2)
  })
})
