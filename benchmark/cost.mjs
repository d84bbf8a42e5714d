// What context management costs per task, billed as providers with a prompt cache bill it: replays
// generated and corpus coding-agent traces through a native Session + AutoCompactor under several
// policies, prices every request (the agent's and the summary calls) through a simulated prompt
// cache, prints a Markdown report, writes it to benchmark/cost.md, and evaluates issue 18's targets.
//
//   node benchmark/cost.mjs            # 150, 500 and 1,500 messages × 3 seeds, and the corpus
//   node benchmark/cost.mjs --quick    # 150 and 500 messages × 1 seed, 3 corpus sessions, no fine grid
//   node benchmark/cost.mjs --check    # also compare each step's prompt with toModelMessages()
//   node benchmark/cost.mjs --transcript  # summary requests in the transcript form
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Session } from '../dist/index.js'
import { PRICINGS, PRICES_SOURCE, PromptBuilder, caches, usd } from './cost-cache.mjs'
import { FINE_THRESHOLDS, POLICIES, RIVALS, THRESHOLDS, replay } from './cost-replay.mjs'
import { agentOverhead, corpusTraces, generateTrace } from './cost-traces.mjs'
import { log } from './timing.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const quick = process.argv.includes('--quick')
const check = process.argv.includes('--check')
// The default's summary requests as the agent's own conversation (read from its cache) unless `--transcript`.
const summaryInput = process.argv.includes('--transcript') ? 'transcript' : 'conversation'
// Every policy tabled, and (unless `--quick`) compaction-only on the fine threshold grid for the targets.
const REPLAYED = quick ? POLICIES : [...POLICIES, ...RIVALS]
const GRID = quick ? THRESHOLDS : FINE_THRESHOLDS

// gpt-4o counted with o200k; a 200k window for the generated traces (as the issue measured), and
// gpt-4o's own 128k for the corpus, whose sessions are shorter (with 200k only 8 of them overflow).
const GENERATED_MODEL = { providerID: 'openai', modelID: 'gpt-4o', limit: { context: 200_000, output: 16_384 } }
const CORPUS_MODEL = { providerID: 'openai', modelID: 'gpt-4o', limit: { context: 128_000, output: 16_384 } }
const LENGTHS = quick ? [150, 500] : [150, 500, 1500]
const SEEDS = quick ? [1] : [1, 2, 3]
const CORPUS_LIMIT = quick ? 3 : Infinity
const MINUTE = 60_000

const overhead = agentOverhead()

/** Whether a trace's context would overflow `model`'s window without compaction. */
function overflows(trace, model) {
  const session = new Session({ model, tokenizer: 'o200k' })
  session.setOverhead(overhead)
  for (const m of trace.messages) session.append(m)
  return session.isOverflow()
}

function traceSets() {
  const sets = LENGTHS.map((n) => ({
    name: `generated, ${n} messages`,
    window: GENERATED_MODEL.limit.context,
    model: GENERATED_MODEL,
    traces: SEEDS.map((seed) => generateTrace(n, seed)),
  }))
  const corpus = corpusTraces()
    .filter((t) => overflows(t, CORPUS_MODEL))
    .sort((a, b) => a.messages.length - b.messages.length)
    .slice(0, CORPUS_LIMIT)
  sets.push({ name: 'corpus', window: CORPUS_MODEL.limit.context, model: CORPUS_MODEL, traces: corpus })
  return sets
}

const cacheOf = (p) => (p.ttlMs > 5 * MINUTE ? 'long' : 'short')

/** A replay's bill at `p`'s prices. */
function bill(r, p) {
  const c = r.cache[cacheOf(p)]
  const input = usd(p, { read: c.read, written: c.written })
  const output = usd(p, { output: r.output })
  const summary = usd(p, { read: c.summaryRead, written: c.summaryWritten, uncached: c.summaryUncached, output: r.summaryOutput })
  const rerun = usd(p, { written: r.rerun })
  const inputTokens = c.read + c.written + c.summaryRead + c.summaryWritten + c.summaryUncached
  return {
    usd: input + output + summary + rerun,
    summary,
    readShare: (c.read + c.summaryRead) / inputTokens,
    breaks: c.breaks,
    compactions: r.compactions,
    unreadSummarized: r.unreadSummarized,
    prunes: r.prunes,
  }
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)

/** Replays every trace of every set under every policy; the default once per pricing when prices change what it does. */
async function run(sets) {
  const probe = {}
  const calls = { summary: 0, conversation: 0 }
  const warnings = [] // replays whose compactions failed or whose breaker tripped
  const total = sets.reduce((n, s) => n + s.traces.length, 0) * REPLAYED.length
  let done = 0
  const started = Date.now()
  for (const set of sets) {
    set.results = [] // per trace: policy name -> pricing name -> bill
    for (const trace of set.traces) {
      const byPolicy = {}
      const builder = new PromptBuilder() // token counts by message hash, shared by the trace's replays
      for (const policy of REPLAYED) {
        process.stderr.write(`\r\x1b[K[cost] ${++done}/${total} ${set.name}: ${trace.name} (${trace.messages.length} messages), ${policy.name} — ${((Date.now() - started) / 1000).toFixed(0)} s`)
        const options = { model: set.model, overhead, check, builder, summaryInput }
        const first = await replay(trace, policy, { ...options, pricing: PRICINGS[0], probe: policy.aware ? probe : {} })
        const perPricing = {}
        const replays = new Set()
        for (const p of PRICINGS) {
          const dependsOnPrices = policy.aware && probe.sessionPrices
          const r = p === PRICINGS[0] || !dependsOnPrices ? first : await replay(trace, policy, { ...options, pricing: p })
          perPricing[p.name] = bill(r, p)
          replays.add(r)
        }
        byPolicy[policy.name] = perPricing
        for (const r of replays) {
          calls.summary += r.summaryCalls
          calls.conversation += r.conversationCalls
          if (r.failures > 0 || r.tripped) warnings.push(`${trace.name}, ${policy.name}: ${r.failures} failed compactions${r.tripped ? `, the breaker tripped (${r.tripped})` : ''}`)
        }
      }
      set.results.push(byPolicy)
    }
  }
  return { probe, calls, warnings, seconds: (Date.now() - started) / 1000 }
}

/** Mean figures per task of `policy` at pricing `p` over a set's traces. */
function summarize(set, policy, p) {
  const bills = set.results.map((r) => r[policy][p.name])
  const cost = mean(bills.map((b) => b.usd))
  const summary = mean(bills.map((b) => b.summary))
  return {
    cost,
    summary,
    summaryShare: summary / cost,
    readShare: mean(bills.map((b) => b.readShare)),
    breaks: mean(bills.map((b) => b.breaks)),
    compactions: mean(bills.map((b) => b.compactions)),
    unreadSummarized: mean(bills.map((b) => b.unreadSummarized)),
    prunes: mean(bills.map((b) => b.prunes)),
  }
}

const money = (x) => `$${x.toFixed(x < 1 ? 3 : 2)}`
const pct = (x) => `${(100 * x).toFixed(1)}%`
const saving = (cost, base) => (cost <= base ? `${(100 * (1 - cost / base)).toFixed(2)}% less` : `${(100 * (cost / base - 1)).toFixed(2)}% more`)
const num = (x) => (Number.isInteger(x) ? String(x) : x.toFixed(1))

function table(set) {
  const rows = [
    '| pricing | policy | cost per task | vs compaction-only | input read from cache | cache breaks | compactions | of them summarizing an unread output | prunes | summary calls |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ]
  for (const p of PRICINGS) {
    const base = summarize(set, 'compaction-only', p).cost
    for (const { name } of POLICIES) {
      const s = summarize(set, name, p)
      const cached = caches(p)
      rows.push(
        `| ${p.name} | ${name} | ${money(s.cost)} | ${(s.cost / base).toFixed(3)}× | ${cached ? pct(s.readShare) : '—'} | ${cached ? num(s.breaks) : '—'} | ${num(s.compactions)} | ${num(s.unreadSummarized)} | ${num(s.prunes)} | ${money(s.summary)} (${pct(s.summaryShare)}) |`,
      )
    }
  }
  return rows.join('\n')
}

/** Cost per task against compaction-only: one row per policy, one column per set, each pricing in a cell. */
function overview(sets) {
  const head = `| policy | ${sets.map((s) => s.name).join(' | ')} |`
  const rows = [head, `|---|${sets.map(() => '---:').join('|')}|`]
  for (const { name } of POLICIES) {
    const cells = sets.map((set) =>
      PRICINGS.map((p) => {
        const s = summarize(set, name, p)
        return name === 'compaction-only' ? money(s.cost) : (s.cost / summarize(set, 'compaction-only', p).cost).toFixed(2)
      }).join(' / '),
    )
    rows.push(`| ${name} | ${cells.join(' | ')} |`)
  }
  return rows.join('\n')
}

/** Issue 18's targets for one set: each met or not, with the figures. */
function targets(set) {
  const out = []
  const line = (ok, text) => out.push(`- ${ok === undefined ? 'n/a' : ok ? 'met' : '**not met**'}: ${text}`)
  for (const p of PRICINGS) {
    const d = summarize(set, 'default', p)
    const only = summarize(set, 'compaction-only', p)
    const vs = (x) => `default ${money(d.cost)} vs ${money(x.cost)} (${(d.cost / x.cost).toFixed(4)}×, ${saving(d.cost, x.cost)})`
    if (!caches(p)) {
      line(d.cost <= only.cost, `${p.name}: no more than compaction-only — ${vs(only)}`)
      continue
    }
    const oc = summarize(set, 'opencode', p)
    line(d.cost <= 0.85 * oc.cost, `${p.name}: ≥ 15% less than opencode's rule — ${vs(oc)}`)
    line(d.cost <= only.cost, `${p.name}: no more than compaction-only — ${vs(only)}`)
    const family = [['compaction-only', only], ...GRID.map((at) => [`compaction-only@${at}`, summarize(set, `compaction-only@${at}`, p)])]
    const rivals = family.filter(([, s]) => s.compactions <= d.compactions).sort((a, b) => a[1].cost - b[1].cost)
    if (rivals.length === 0) {
      const rarest = family.reduce((a, b) => (b[1].compactions < a[1].compactions ? b : a))
      line(
        undefined,
        `${p.name}: ≥ 3% less than the cheapest compaction-only policy compacting no more often — none compacts as rarely as the default (${num(d.compactions)} a task; the rarest, ${rarest[0]}, ${num(rarest[1].compactions)}) — ${vs(rarest[1])}`,
      )
    } else {
      const [name, best] = rivals[0]
      line(d.cost <= 0.97 * best.cost, `${p.name}: ≥ 3% less than the cheapest compaction-only policy compacting no more often (${name}, ${num(best.compactions)} vs ${num(d.compactions)} compactions a task) — ${vs(best)}`)
    }
  }
  // Compaction frequency: per task on average, and trace by trace where compaction-only compacts.
  // A trace compaction-only never compacts (its context peaks below the window) has no ratio: any
  // threshold below the window may compact it; those are listed with what they cost each policy.
  const means = PRICINGS.map((p) => summarize(set, 'default', p).compactions / Math.max(1e-9, summarize(set, 'compaction-only', p).compactions))
  const worstMean = Math.max(...means)
  line(worstMean <= 2, `compacts no more than twice as often as compaction-only, per task on average — ${worstMean.toFixed(2)}× at most`)
  let worst = 0
  let where = ''
  const unbounded = []
  for (const [i, r] of set.results.entries()) {
    for (const p of PRICINGS) {
      const d = r.default[p.name]
      const only = r['compaction-only'][p.name]
      if (only.compactions === 0) {
        if (d.compactions > 0) unbounded.push(`${set.traces[i].name}, ${p.name}: ${d.compactions} vs 0, billed ${(d.usd / only.usd).toFixed(2)}× compaction-only`)
        continue
      }
      const ratio = d.compactions / only.compactions
      if (ratio > worst) [worst, where] = [ratio, `${set.traces[i].name}, ${p.name}: ${d.compactions} vs ${only.compactions}`]
    }
  }
  line(worst <= 2, `compacts no more than twice as often as compaction-only, trace by trace where compaction-only compacts — worst ${worst.toFixed(2)}×${where ? ` (${where})` : ''}`)
  if (unbounded.length > 0) {
    line(undefined, `traces compaction-only never compacts (peaking below the window) that the default compacts, no ratio: ${unbounded.join('; ')}`)
  }
  return out
}

/** The checkout measured (the addon and dist/ are built from it), `unknown` outside a git checkout. */
function commit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: here, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return 'unknown'
  }
}

function render(sets, { probe, calls, warnings, seconds }) {
  const lines = [
    '# Cost per task: context management billed with a prompt cache',
    '',
    `${new Date().toISOString()}, commit ${commit()}, Node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, ${seconds.toFixed(0)} s${quick ? ' (`--quick`)' : ''}.`,
    '',
    'Each trace is replayed through a native `Session` (o200k counting) and an `AutoCompactor` with the offline `extractiveSummarizer()` wrapped as an LLM summarizer would be called. Every assistant message is one request: its input is the context as sent (system prompt and tool definitions, then `session.toModelMessages()` before the message is appended), its output the message. The provider cache reads the longest prefix, in whole messages, shared with an earlier request still alive (5 minutes or 1 hour since last used, from the trace timestamps) and writes the rest. A summary request in the conversation form (`req.messages`) goes through the same cache; in the transcript form (`system` + `prompt`) it is billed uncached; its output at the output price. A cache break is a request that reads less than the whole previous request. A compaction summarizing an unread output summarized the answer just appended, whose tool output no request had sent to the model yet: the model gets a summary of a result it never saw, and a real agent runs the tool again; the replay bills that as the tokens of the output written to the cache once (the least the model reading it again costs; at the input price without a cache).',
    '',
    `Prices (USD per million tokens; ${PRICES_SOURCE}):`,
    '',
    '| pricing | input | output | cache read | cache write | cache lifetime |',
    '|---|---:|---:|---:|---:|---:|',
    ...PRICINGS.map((p) => {
      const w = p.ttlMs > 5 * MINUTE ? p.cost.cacheWrite1h : p.cost.cacheWrite
      return `| ${p.name} | ${p.cost.input} | ${p.cost.output} | ${p.cost.cacheRead ?? '—'} | ${caches(p) ? (w ?? `${p.cost.input} (no premium)`) : '—'} | ${caches(p) ? `${p.ttlMs / MINUTE} min` : '—'} |`
    }),
    '',
    'Policies: `compaction-only` never prunes and compacts on overflow (`prune: false`), `@x` at `compactAt: x`; `opencode` runs `session.prune()` after every step; `tier` is `prune: true` (prune at the prune tier); `pi` never prunes, compacts at window − 16,384 and keeps 20,000 recent tokens (`reserved`, `preserveRecentTokens`; the session\'s own reserve for these models is also 16,384, so pi differs in its tail, 15,000 tokens by default); `default` passes no policy option, only the trace clock (`clock`); every session is given the prices and the cache lifetime (`model.cost`, `cache.ttl`).',
    `The targets hold the default against compaction-only at ${quick ? 'the tabled thresholds (`--quick`)' : `every threshold from ${GRID[0]} to ${GRID[GRID.length - 1]} by 0.025 (those not tabled are replayed for the targets only)`}.`,
    `Summary requests: ${summaryInput === 'transcript' ? 'every policy sends them as a transcript (`--transcript`)' : "the peers' recipes send them as a transcript (today's `compact()`, pi, opencode: `summaryInput: 'transcript'`), the default as the agent's own conversation (`summaryInput: 'conversation'`, what the AI SDK integration does when the summarizer is the agent's model)"}; ${calls.conversation} of ${calls.summary} were sent in the conversation form.`,
    `Default policy, probed at run time: the clock was ${probe.clock ? '' : 'never '}read, the session ${probe.sessionPrices ? 'kept the prices (the default was replayed once per pricing)' : 'ignored the prices (one replay serves every pricing)'}${probe.recorded ? ', each request was recorded (`session.recordRequest`)' : ''}.`,
    ...(warnings.length > 0 ? ['', 'Automatic compaction did not run as configured in:', '', ...warnings.map((w) => `- ${w}`)] : []),
    '',
    `## Overview`,
    '',
    `Cost per task as ${PRICINGS.map((p) => p.name).join(' / ')}: compaction-only in USD, the other policies as a ratio to it (lower is cheaper).`,
    '',
    overview(sets),
    '',
  ]
  for (const set of sets) {
    const msgs = set.traces.map((t) => t.messages.length)
    lines.push(`## ${set.name}`, '')
    lines.push(
      `${set.traces.length} traces of ${Math.min(...msgs) === Math.max(...msgs) ? msgs[0] : `${Math.min(...msgs)}–${Math.max(...msgs)}`} messages, a ${set.window / 1000}k window (gpt-4o, o200k); figures are means per task.${set.name === 'corpus' ? ` Sessions: ${set.traces.map((t) => `\`${t.name}\``).join(', ')}.` : ''}`,
      '',
      table(set),
      '',
      '### Targets',
      '',
      ...targets(set),
      '',
    )
  }
  return lines.join('\n')
}

const sets = traceSets()
const outcome = await run(sets)
log('')
const markdown = render(sets, outcome)
writeFileSync(join(here, 'cost.md'), `${markdown}\n`)
console.log(markdown)
log(`written to ${join('benchmark', 'cost.md')}`)
