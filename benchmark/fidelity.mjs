// Fidelity: sessions with planted facts of every kind, compacted three times in a row, with the
// extractive summarizer and with a scripted "forgetful" summarizer that drops about half of what
// it should keep each time. For each kind, the share of the facts planted so far that the model
// still sees (`toModelMessages()`) after each compaction, with and without the loss audit, and the
// context after each compaction as a share of the context before it.
//
//   node benchmark/fidelity.mjs            # Markdown tables
//   node benchmark/fidelity.mjs --json     # the figures as JSON
import { Session, compact, extractiveSummarizer, extractiveSummary } from '../dist/index.js'
import { rng } from './corpus-text.mjs'

const PHASES = 3
const KINDS = ['modifiedFile', 'readFile', 'constraint', 'error', 'request', 'identifier', 'pin']

const CONSTRAINTS = [
  'Never touch the migrations in db/migrations.',
  'Target Node 18 too.',
  'Put new modules under lib/v2.',
  "Don't add runtime dependencies.",
  'Keep the public API of the exporter unchanged.',
  'Only use the built-in test runner.',
]
const IDENTIFIERS = [
  ['ENG-4521', 'https://tracker.example.com/browse/ENG-4521'],
  ['ENG-4588', 'https://ci.example.com/job/build/881'],
  ['ENG-4630', '9fceb02d7a1c'],
]

let seq = 0
const id = (p) => `${p}${++seq}`

function user(text) {
  return { id: id('u'), role: 'user', parts: [{ type: 'text', id: id('t'), text }] }
}

function tool(name, input, output, extra = {}) {
  const m = { id: id('a'), role: 'assistant', finish: 'tool-calls', ...extra, parts: [] }
  m.parts.push({ type: 'tool', id: id('p'), callID: id('c'), tool: name, state: { status: 'completed', input, output } })
  return m
}

function text(t) {
  return { id: id('a'), role: 'assistant', finish: 'stop', parts: [{ type: 'text', id: id('t'), text: t }] }
}

/** Long, realistic tool output: a source file or a test log. */
function body(lines, label, random) {
  const out = []
  for (let i = 0; i < lines; i++) {
    out.push(`${label} ${i}: const value${i} = compute(${Math.floor(random() * 1e6)}, "${label}") // keeps line ${i} of the listing`)
  }
  return out.join('\n')
}

/** One phase of work: its messages, and the facts planted in it. */
function phase(k, random) {
  const msgs = []
  const planted = { modifiedFile: [], readFile: [], constraint: [], identifier: [], error: [], request: [] }
  const [ticket, link] = IDENTIFIERS[k]
  const c1 = CONSTRAINTS[2 * k]
  const c2 = CONSTRAINTS[2 * k + 1]
  msgs.push(user(`Phase ${k + 1}: add the ${['CSV', 'JSON', 'XML'][k]} exporter for ${ticket} (see ${link}). ${c1}`))
  planted.constraint.push(c1)
  planted.identifier.push(ticket, link)
  for (let i = 0; i < 6; i++) {
    const path = `src/phase${k + 1}/reader_${i}.ts`
    msgs.push(tool('read', { filePath: path }, body(70, path, random)))
    planted.readFile.push(path)
  }
  const branch = `release/2.${14 + k}`
  msgs.push(user(`Also: ${c2} Then run the tests, and push to branch ${branch}.`))
  planted.constraint.push(c2)
  planted.identifier.push(branch)
  const edited = [`src/export/${['csv', 'json', 'xml'][k]}.ts`, `src/export/index_${k + 1}.ts`]
  for (const path of edited) {
    msgs.push(tool('edit', { filePath: path, oldString: 'a', newString: 'b' }, 'Edit applied successfully.'))
    planted.modifiedFile.push(path)
  }
  const failure = `error TS2345: Argument of type 'Row${k + 1}' is not assignable to parameter of type 'Record'`
  msgs.push(tool('bash', { command: 'npm test' }, `${body(60, 'test log', random)}\nsrc/export/index_${k + 1}.ts(12,7): ${failure}\nExit code: 2`))
  planted.error.push(failure)
  for (let i = 0; i < 5; i++) msgs.push(tool('bash', { command: `grep -rn "value${i}" src` }, body(50, `grep ${i}`, random)))
  msgs.push(text('The exporter compiles except for the row type; I will fix it next.'))
  const request = `Fix the row type error in src/export/index_${k + 1}.ts and make "npm test" pass for phase ${k + 1}.`
  msgs.push(user(request))
  planted.request.push(request)
  for (let i = 0; i < 4; i++) msgs.push(tool('read', { filePath: `src/export/index_${k + 1}.ts` }, body(60, `index ${k + 1} v${i}`, random)))
  return { msgs, planted }
}

/**
 * The forgetful summarizer: writes what the extractive one would, then forgets about half of the
 * bullets (a different half each time) and any "Preserved" section it was given.
 */
function forgetfulSummarizer(seed) {
  const random = rng(seed)
  return async (req) => {
    const full = extractiveSummary(req.plan, { template: req.template })
    const lines = full
      .split('\n')
      .filter((l) => !/^- (Pinned|Latest request|Constraint|Last error|Identifier)/.test(l) || random() < 0.3)
      .filter((l) => !/^\s*[-\d]/.test(l) || random() < 0.5)
    return { text: lines.join('\n').replace(/## Preserved[\s\S]*$/, ''), finishReason: 'stop' }
  }
}

/** Everything the model reads, as one normalized string. */
function seen(session) {
  const out = []
  const walk = (v) => {
    if (typeof v === 'string') out.push(v)
    else if (Array.isArray(v)) v.forEach(walk)
    else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x)
  }
  walk(session.toModelMessages())
  return normalize(out.join('\n'))
}

const normalize = (s) => s.replace(/`/g, ' ').replace(/\s+/g, ' ').toLowerCase()
const present = (hay, fact) => hay.includes(normalize(fact).replace(/[.!;:,]+$/, '').trim())

async function run(name, summarizer, audit) {
  seq = 0
  const random = rng(7)
  const session = new Session({
    model: { limit: { context: 64_000, output: 8_000 } },
    tokenizer: 'estimate',
  })
  const planted = Object.fromEntries(KINDS.map((k) => [k, []]))
  const rounds = []
  for (let k = 0; k < PHASES; k++) {
    const p = phase(k, random)
    for (const m of p.msgs) session.append(m)
    for (const [kind, facts] of Object.entries(p.planted)) planted[kind].push(...facts)
    if (k === 0) planted.pin.push(session.pinText('Production deploys go through the staging cluster first.').text)
    const before = session.usage().tokens
    const result = await compact(session, { summarizer, audit, auto: true })
    if (result.status !== 'compacted') throw new Error(`${name}: compaction ${k + 1} ${result.status}: ${result.reason}`)
    const after = session.usage().tokens
    const hay = seen(session)
    // The last error and the latest request are the newest ones; every other kind counts all planted so far.
    const current = { ...planted, error: planted.error.slice(-1), request: planted.request.slice(-1) }
    const share = Object.fromEntries(KINDS.map((kind) => [kind, current[kind].filter((f) => present(hay, f)).length / current[kind].length]))
    rounds.push({ before, after, ratio: after / before, share, restored: result.audit?.restored.length ?? 0 })
  }
  return { name, audit, rounds }
}

const results = []
for (const [name, make] of [
  ['extractive', () => extractiveSummarizer()],
  ['forgetful', () => forgetfulSummarizer(11)],
]) {
  for (const audit of [true, false]) results.push(await run(name, make(), audit))
}

if (process.argv.includes('--json')) {
  console.log(JSON.stringify(results, null, 2))
} else {
  const pct = (x) => `${Math.round(x * 100)}%`
  console.log(`Fidelity after each of ${PHASES} compactions (share of planted facts the model still sees)\n`)
  console.log(`| summarizer | audit | compaction | ${KINDS.join(' | ')} | restored | context after / before |`)
  console.log(`|---|---|---:|${KINDS.map(() => '---:').join('|')}|---:|---:|`)
  for (const r of results) {
    r.rounds.forEach((x, i) => {
      const cells = KINDS.map((k) => pct(x.share[k]))
      console.log(`| ${r.name} | ${r.audit ? 'on' : 'off'} | ${i + 1} | ${cells.join(' | ')} | ${x.restored} | ${x.after.toLocaleString('en')} / ${x.before.toLocaleString('en')} = ${pct(x.ratio)} |`)
    })
  }
}
