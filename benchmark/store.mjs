// Opening a long session and building the model context, contextfold's SessionFile vs pi's
// SessionManager (0.73.1, and on Node 22+ also 0.87.1: benchmark/pi-versions.mjs), on the same
// synthetic conversation written in both formats: 10,000 messages, ~50 MB.
//   (a) compacted several times, the context under 200k tokens (a Claude model: the estimate)
//   (b) never compacted (the context is the whole file), with the estimate
//   (c) the same with the exact o200k tokenizer (an OpenAI model)
// contextfold: SessionFile.open(path) + store.load(options).toModelMessages()
// pi:          SessionManager.open(path) + buildSessionContext() + convertToLlm(messages)
// Each is also timed as the first call of a fresh Node process (an agent resuming a session at
// start-up: nothing warm but the page cache), a process per run, the contenders alternating.
// Run: node benchmark/store.mjs   (progress and a Markdown table on stderr, one JSON result on stdout;
// also section 4 of `npm run bench`); `node scripts/with-node.mjs 24 node benchmark/store.mjs` adds
// pi 0.87.1. Release build only: `npm run build` builds one.
import { spawnSync } from 'node:child_process'
import { closeSync, existsSync, fsyncSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { now, msSince, median, log, isMain, settle } from './timing.mjs'
import { rng } from './corpus-text.mjs'
import { piVersions } from './pi-versions.mjs'

const require = createRequire(import.meta.url)
const { SessionFile, estimateTokens } = require('../native.js')

export const MESSAGES = 10_000
// Enough runs that a median of a few ms (the compacted case) holds on a shared machine.
const RUNS = 15
// Fresh processes per contender and session.
const FRESH_RUNS = 5
const MODEL = { providerID: 'anthropic', modelID: 'claude-sonnet-4-5', limit: { context: 200_000, output: 64_000 } }
export const OPTIONS = { model: MODEL }
const OPENAI = { providerID: 'openai', modelID: 'gpt-4o', limit: { context: 128_000, output: 16_384 } }
const TOOLS = ['bash', 'read', 'grep', 'edit']


const WORDS = ('the of and to in is that for it as was with be by on not he this are or his from at which but have ' +
  'function return const let value error file path test build import export class type string number async await ' +
  'src lib index main config server client request response cache token session context message tool output').split(' ')

function text(rand, chars) {
  let out = ''
  while (out.length < chars) {
    out += WORDS[Math.floor(rand() * WORDS.length)]
    out += rand() < 0.08 ? '.\n' : ' '
  }
  return out.slice(0, chars)
}

/**
 * The conversation as a list of turns, format-neutral: each turn is a user text and assistant
 * steps (text, optional tool call with its output). `compactAt` lists the turns before which a
 * compaction summarizes everything but the two previous turns.
 */
export function conversation({ compactAt }) {
  const rand = rng(42)
  const events = []
  let messages = 0
  let turn = 0
  while (messages < MESSAGES) {
    if (compactAt.includes(turn)) {
      events.push({ kind: 'compaction', keepFromTurn: turn - 2, summary: text(rand, 4000) })
      messages += 2
    }
    const steps = []
    const n = 3
    for (let s = 0; s < n; s++) {
      const last = s === n - 1
      steps.push({
        text: text(rand, last ? 600 : 250),
        tool: last ? null : { name: TOOLS[Math.floor(rand() * TOOLS.length)], input: { command: text(rand, 80) }, output: text(rand, 4000 + Math.floor(rand() * 7000)) },
      })
    }
    events.push({ kind: 'turn', turn, user: text(rand, 300 + Math.floor(rand() * 1500)), steps })
    messages += 1 + steps.length
    turn++
  }
  return { events, turns: turn }
}

const T0 = 1_750_000_000_000

/** Writes the conversation with contextfold's SessionFile (`options`: the session's, in the header). */
export function writeContextfold(path, conv, options = OPTIONS) {
  const store = SessionFile.open(path, { durability: 'batch', batchEntries: 1_000, batchMs: 60_000, session: options })
  const userID = (turn) => `u${turn}`
  let t = T0
  let count = 0
  for (const e of conv.events) {
    if (e.kind === 'compaction') {
      const req = `r${count}`
      store.append({ id: req, role: 'user', time: { created: t++ }, parts: [{ type: 'compaction', id: `${req}-c`, auto: true, tailStartID: userID(e.keepFromTurn) }] })
      store.append({
        id: `s${count}`, role: 'assistant', parentID: req, summary: true, finish: 'stop', time: { created: t++, completed: t },
        model: { providerID: MODEL.providerID, modelID: MODEL.modelID }, parts: [{ type: 'text', id: `s${count}-t`, text: e.summary }],
      })
      count += 2
      continue
    }
    const uid = userID(e.turn)
    store.append({ id: uid, role: 'user', time: { created: t++ }, parts: [{ type: 'text', id: `${uid}-t`, text: e.user }] })
    count++
    e.steps.forEach((s, k) => {
      const id = `a${e.turn}-${k}`
      const parts = [{ type: 'text', id: `${id}-t`, text: s.text }]
      if (s.tool) {
        parts.push({
          type: 'tool', id: `${id}-c`, callID: `call_${e.turn}_${k}`, tool: s.tool.name,
          state: { status: 'completed', input: s.tool.input, output: s.tool.output, title: s.tool.name, time: { start: t, end: t + 3 } },
        })
      }
      const last = k === e.steps.length - 1
      store.append({
        id, role: 'assistant', parentID: uid, time: { created: t++, completed: t }, finish: last ? 'stop' : 'tool-calls',
        model: { providerID: MODEL.providerID, modelID: MODEL.modelID }, parts,
      })
      count++
    })
  }
  store.close()
  return count
}

/** Writes the same conversation as a pi session file (version 3, see reference/pi.md §3). */
export function writePi(path, conv) {
  const lines = []
  let n = 0
  let parentId = null
  let t = T0
  const newId = () => (n++).toString(16).padStart(8, '0')
  const iso = () => new Date(t++).toISOString()
  const entry = (e) => {
    const id = newId()
    lines.push(JSON.stringify({ ...e, id, parentId, timestamp: iso() }))
    parentId = id
    return id
  }
  lines.push(JSON.stringify({ type: 'session', version: 3, id: 'bench-session', timestamp: new Date(T0).toISOString(), cwd: '/work/project' }))
  const usage = (input) => ({ input, output: 200, cacheRead: 0, cacheWrite: 0, totalTokens: input + 200, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } })
  const firstEntryOfTurn = new Map()
  for (const e of conv.events) {
    if (e.kind === 'compaction') {
      entry({ type: 'compaction', summary: e.summary, firstKeptEntryId: firstEntryOfTurn.get(e.keepFromTurn), tokensBefore: 150_000 })
      continue
    }
    const uid = entry({ type: 'message', message: { role: 'user', content: [{ type: 'text', text: e.user }], timestamp: t } })
    firstEntryOfTurn.set(e.turn, uid)
    e.steps.forEach((s, k) => {
      const content = [{ type: 'text', text: s.text }]
      const callId = `call_${e.turn}_${k}`
      if (s.tool) content.push({ type: 'toolCall', id: callId, name: s.tool.name, arguments: s.tool.input })
      entry({
        type: 'message',
        message: {
          role: 'assistant', content, api: 'anthropic-messages', provider: MODEL.providerID, model: MODEL.modelID,
          usage: usage(1000 + n), stopReason: s.tool ? 'toolUse' : 'stop', timestamp: t,
        },
      })
      if (s.tool) {
        entry({ type: 'message', message: { role: 'toolResult', toolCallId: callId, toolName: s.tool.name, content: [{ type: 'text', text: s.tool.output }], isError: false, timestamp: t } })
      }
    })
  }
  writeFileSync(path, `${lines.join('\n')}\n`)
  return lines.length - 1
}

function syncFile(path) {
  const fd = openSync(path, 'r+')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Each of `fns` timed `RUNS` times, taking turns (a round is one call of each, in order), so that
 * whatever the machine does meanwhile falls on all of them alike: the median and the last output
 * of each.
 */
async function timeTurns(fns) {
  for (const fn of fns) fn() // warm-up (JIT, page cache, first-use costs)
  const ms = fns.map(() => [])
  const out = []
  for (let i = 0; i < RUNS; i++) {
    for (const [k, fn] of fns.entries()) {
      out[k] = undefined
      await settle()
      const t0 = now()
      out[k] = fn()
      ms[k].push(msSince(t0))
    }
  }
  return fns.map((_, k) => ({ ms: median(ms[k]), out: out[k] }))
}

/** The contenders' calls, as `timeTurns` and `firstCallChild` run them. */
const contextfold = (cfPath, options, open) => () => {
  const store = SessionFile.open(cfPath, open)
  const session = store.load(options)
  const out = session.toModelMessages()
  store.close()
  // What the report reads of the session is read after the clock stops (see `described`).
  return { out, session }
}
/** What the report says of a load's session. */
const described = ({ out, session }) => ({ out, length: session.length, tokens: session.usage().tokens, tokenizer: session.options.tokenizer })
const piCall = (pi, piPath) => () => {
  const sm = pi.SessionManager.open(piPath)
  const ctx = sm.buildSessionContext()
  return pi.convertToLlm(ctx.messages)
}

/** A child's run: the first call of `who` in this process (modules imported untimed), in ms on stdout. */
async function firstCallChild(who, path, options) {
  const pi = who === 'contextfold' ? null : (await piVersions()).find((p) => p.version === who)?.pi
  const call = pi ? piCall(pi, path) : contextfold(path, JSON.parse(options))
  const t0 = now()
  call()
  console.log(msSince(t0))
}

/** Median ms of the first call of each contender (`[who, path]`) over `FRESH_RUNS` fresh processes each. */
function firstCalls(contenders, options) {
  const ms = new Map(contenders.map(([who]) => [who, []]))
  for (let i = 0; i < FRESH_RUNS; i++) {
    for (const [who, path] of contenders) {
      const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--first', who, path, JSON.stringify(options)], { encoding: 'utf8' })
      const t = Number(child.stdout.trim())
      if (child.status !== 0 || !Number.isFinite(t)) throw new Error(`first call of ${who} failed: ${child.stderr}`)
      ms.get(who).push(t)
    }
  }
  return new Map([...ms].map(([who, xs]) => [who, median(xs)]))
}

async function main() {
  const pis = await piVersions()
  const dir = mkdtempSync(join(tmpdir(), 'contextfold-bench-store-'))
  try {
    const cases = []
    const piFiles = new Map()
    // Every file is written and synced before anything is timed: the kernel writing dirty pages
    // back would otherwise take a core from the first timings.
    const files = []
    for (const [name, compactAt, options] of [
      ['compacted', [600, 1200, 1800, 2470], OPTIONS],
      ['uncompacted', [], OPTIONS],
      ['uncompacted-o200k', [], { model: OPENAI }],
    ]) {
      const conv = conversation({ compactAt })
      const cfPath = join(dir, `${name}.contextfold.jsonl`)
      const messages = writeContextfold(cfPath, conv, options)
      const key = JSON.stringify(compactAt)
      if (!piFiles.has(key)) {
        const piPath = join(dir, `pi-${piFiles.size}.jsonl`)
        piFiles.set(key, { path: piPath, entries: writePi(piPath, conv) })
        syncFile(piPath)
      }
      files.push({ name, options, cfPath, messages, ...piFiles.get(key) })
    }
    for (const { name, options, cfPath, messages, path: piPath, entries } of files) {
      log(`  ${name}: ${messages} messages, contextfold ${(statSync(cfPath).size / 1e6).toFixed(1)} MB; pi ${entries} entries, ${(statSync(piPath).size / 1e6).toFixed(1)} MB`)

      const readOnly = () => {
        const store = SessionFile.open(cfPath, { readOnly: true })
        return store.load(options).toModelMessages()
      }
      // contextfold's two ways take turns; each pi its own block of runs (see docs/benchmarks.md: with pi's
      // calls between ours, the allocator has given a load's memory back before the next one).
      // The first (warm-up) load of a writer writes the snapshot of a never-compacted file. The
      // JSON-only load runs its own block, as each pi does: between two loads from the snapshot
      // it would have the allocator give their memory back to the OS.
      const [timed, reader] = await timeTurns([contextfold(cfPath, options), readOnly])
      const writer = { ms: timed.ms, out: described(timed.out) }
      const [json] = await timeTurns([contextfold(cfPath, options, { snapshot: false })])
      const piRows = []
      for (const { version, pi } of pis) {
        const [t] = await timeTurns([piCall(pi, piPath)])
        piRows.push({ version, ms: t.ms, messages: t.out.length, contextMB: JSON.stringify(t.out).length / 1e6, ratio: t.ms / writer.ms, ratioReadOnly: t.ms / reader.ms, ratioJson: t.ms / json.ms })
      }
      const first = firstCalls([['contextfold', cfPath], ...pis.map((p) => [p.version, piPath])], options)
      for (const p of piRows) {
        p.firstMs = first.get(p.version)
        p.firstRatio = p.firstMs / first.get('contextfold')
      }
      const contextChars = JSON.stringify(writer.out.out).length
      const r = {
        name,
        tokenizer: writer.out.tokenizer,
        messages,
        fileMB: statSync(cfPath).size / 1e6,
        piFileMB: statSync(piPath).size / 1e6,
        piEntries: entries,
        loadedMessages: writer.out.length,
        contextTokens: writer.out.tokens,
        contextTokensEstimate: estimateTokens(JSON.stringify(writer.out.out)),
        modelMessages: writer.out.out.length,
        contextMB: contextChars / 1e6,
        contextfoldMs: writer.ms,
        contextfoldReadOnlyMs: reader.ms,
        contextfoldJsonMs: json.ms,
        snapshotMB: existsSync(`${cfPath}.snapshot`) ? statSync(`${cfPath}.snapshot`).size / 1e6 : 0,
        contextfoldFirstMs: first.get('contextfold'),
        pi: piRows,
      }
      const vs = piRows.map((p) => `pi ${p.version} ${p.ms.toFixed(1)} ms: ${p.ratio.toFixed(1)}× (${p.ratioReadOnly.toFixed(1)}×)`).join('; ')
      log(`    contextfold (${r.tokenizer}) ${r.contextfoldMs.toFixed(1)} ms (read-only ${r.contextfoldReadOnlyMs.toFixed(1)} ms, JSON only ${r.contextfoldJsonMs.toFixed(1)} ms); ${vs}; context ${r.modelMessages} model messages, ${r.contextTokens} tokens (pi ${piRows[0].messages} messages)`)
      log(`    first call in a fresh process: contextfold ${r.contextfoldFirstMs.toFixed(1)} ms; ${piRows.map((p) => `pi ${p.version} ${p.firstMs.toFixed(1)} ms: ${p.firstRatio.toFixed(1)}×`).join('; ')}`)
      cases.push(r)
    }
    return { runs: RUNS, freshRuns: FRESH_RUNS, node: process.version, cases }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (isMain(import.meta.url)) {
  if (process.argv[2] === '--first') {
    await firstCallChild(process.argv[3], process.argv[4], process.argv[5])
  } else {
    const result = await main()
    const { storeSection } = await import('./report.mjs')
    log(`\n${storeSection(result)}`)
    console.log(JSON.stringify(result))
  }
}
