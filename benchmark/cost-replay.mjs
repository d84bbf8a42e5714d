// Replays one trace through a native Session + AutoCompactor under one policy, billing every request
// (the agent's, and the summary calls) through simulated provider prompt caches.
import { AutoCompactor, Session, countTokens, extractiveSummarizer, toModelMessages } from '../dist/index.js'
import { PRICINGS, PromptBuilder, PromptCache } from './cost-cache.mjs'

const SHORT_TTL = PRICINGS[0].ttlMs
const LONG_TTL = PRICINGS[1].ttlMs

/**
 * The policies. `auto`: AutoCompactor options; `compaction`: session options (pi's reserve and
 * kept tail); `everyStep`: `session.prune()` after every step (opencode's rule); `aware`: the
 * library's default, given the trace's clock and the prices.
 */
export const THRESHOLDS = [0.5, 0.6, 0.7, 0.8, 0.9]
/** The finer grid the default is held against ("compaction-only at any threshold"): 0.5 to 0.975 by 0.025. */
export const FINE_THRESHOLDS = Array.from({ length: 20 }, (_, k) => Number((0.5 + 0.025 * k).toFixed(3)))
/** Compaction-only at the thresholds of the fine grid not in `THRESHOLDS`: replayed for the targets, not tabled. */
export const RIVALS = FINE_THRESHOLDS.filter((at) => !THRESHOLDS.includes(at)).map((at) => ({
  name: `compaction-only@${at}`,
  auto: { prune: false, compactAt: at },
}))
export const POLICIES = [
  { name: 'compaction-only', auto: { prune: false } },
  ...THRESHOLDS.map((at) => ({ name: `compaction-only@${at}`, auto: { prune: false, compactAt: at } })),
  { name: 'opencode', auto: { prune: false }, everyStep: true },
  { name: 'tier', auto: { prune: true } },
  // pi: no pruning, compaction at window − 16,384 reserved tokens, 20,000 recent tokens kept.
  { name: 'pi', auto: { prune: false }, compaction: { reserved: 16_384, preserveRecentTokens: 20_000 } },
  { name: 'default', auto: {}, aware: true },
]

/** Tokens an assistant message costs as output: its text, reasoning and tool calls (not the results). */
function outputTokens(m) {
  let text = ''
  for (const p of m.parts) {
    if (p.type === 'text' || p.type === 'reasoning') text += p.text
    else if (p.type === 'tool') text += p.tool + JSON.stringify(p.state?.input ?? null)
  }
  return countTokens(text, 'o200k')
}

/** Tokens of an assistant message's tool outputs (what the model reads of its tool calls). */
function toolOutputTokens(m) {
  return m.parts.reduce((n, p) => n + (p.type === 'tool' && typeof p.state?.output === 'string' ? countTokens(p.state.output, 'o200k') : 0), 0)
}

/** What one replay measured, per cache lifetime (`short`: 5 minutes, `long`: 1 hour). */
function tally() {
  return { read: 0, written: 0, breaks: 0, summaryRead: 0, summaryWritten: 0, summaryUncached: 0 }
}

/**
 * Replays `trace` under `policy`. `pricing` is what the session is told (`model.cost`, `cache.ttl`);
 * `probe` records whether the compactor read the clock and the session kept the prices; `summaryInput`
 * `'transcript'` sends every summary request as a transcript, else only the peers' recipes do. The prompt of
 * each request is `session.toModelMessages()` after a prune or a compaction, and the previous
 * prompt plus the appended messages' model messages otherwise (`check`: compare the two each step).
 */
export async function replay(trace, policy, { model, overhead, pricing, summaryInput, builder = new PromptBuilder(), probe = {}, check = false }) {
  const session = new Session({
    model: { ...model, cost: pricing.cost },
    cache: { ttl: pricing.ttlMs },
    tokenizer: 'o200k',
    ...(policy.compaction ? { compaction: policy.compaction } : {}),
  })
  const system = builder.overhead(overhead, session.setOverhead(overhead))
  const caches = { short: new PromptCache(SHORT_TTL), long: new PromptCache(LONG_TTL) }
  const totals = { short: tally(), long: tally() }
  const out = { requests: 0, prompt: 0, output: 0, compactions: 0, unreadSummarized: 0, rerun: 0, prunes: 0, summaryCalls: 0, conversationCalls: 0, summaryOutput: 0, failures: 0 }
  let now = trace.messages[0]?.time?.created ?? 0

  // The prompt as last built, and the messages appended since (undefined: rebuild it whole).
  let prompt
  let appended = []
  const promptNow = () => {
    if (!prompt) prompt = builder.extend(system, session.toModelMessages())
    else if (appended.length > 0) prompt = builder.extend(prompt, toModelMessages(appended))
    appended = []
    if (check) {
      const whole = builder.extend(system, session.toModelMessages())
      if (whole.length !== prompt.length || whole.some((e, i) => e.chain !== prompt[i].chain)) {
        throw new Error(`${trace.name}, ${policy.name}: the prompt built step by step differs from toModelMessages() at request ${out.requests}`)
      }
    }
    return prompt
  }

  const inner = extractiveSummarizer()
  const summarizer = async (req, signal) => {
    const res = await inner(req, signal)
    out.summaryCalls++
    out.summaryOutput += countTokens(res.text, 'o200k')
    // An LLM summarizer sends the form the request names; a request that names none but carries
    // `messages` is the conversation form.
    if (req.input === 'conversation' || (req.input === undefined && Array.isArray(req.messages))) {
      // The agent's own request, then the instructions: read from the cache.
      out.conversationCalls++
      // The system prompt is in the overhead entry (sent with the tools, ahead of the messages).
      const from = req.messages.findIndex((m) => m.role !== 'system' || m.content !== overhead.system)
      const entries = builder.extend(system, from < 0 ? [] : req.messages.slice(from))
      // The breakpoint goes on the last message the agent's last request sent (`cachedMessages`, as
      // the AI SDK summarizer places it): what follows is read once, as plain input.
      const cacheable = 1 + Math.max(0, req.cachedMessages - Math.max(from, 0))
      for (const k of ['short', 'long']) {
        const r = caches[k].request(entries, now, false, cacheable)
        totals[k].summaryRead += r.read
        totals[k].summaryWritten += r.written
        totals[k].summaryUncached += r.uncached
      }
    } else {
      const tokens = countTokens(`${req.system}\n${req.prompt}`, 'o200k')
      for (const k of ['short', 'long']) totals[k].summaryUncached += tokens
    }
    return res
  }

  // The peers' recipes send their summary as a transcript (today's `compact()`, pi, opencode); the
  // default is an agent whose summarizer is its own model, which the integrations send as the
  // conversation. `--transcript` sends every one as a transcript.
  const options = { summarizer, summaryInput: summaryInput === 'transcript' || !policy.aware ? 'transcript' : 'conversation', ...policy.auto }
  if (policy.aware) options.clock = () => ((probe.clock = true), now)
  const auto = new AutoCompactor(session, options)
  auto.on('prune', () => {
    out.prunes++
    prompt = undefined
  })
  // A session that keeps the prices (`model.cost`, `cache`) may decide by them: replay per pricing.
  if (policy.aware) probe.sessionPrices = session.options?.model?.cost !== undefined || session.options?.cache !== undefined
  // Tell the session when each request is sent, where it listens (the cache-aware policy reads it).
  const records = typeof session.recordRequest === 'function'
  if (policy.aware) probe.recorded = records
  const sent = records ? (at) => session.recordRequest(at) : () => {}

  for (const m of trace.messages) {
    now = Math.max(now, m.time?.created ?? now)
    if (m.role === 'assistant') {
      const entries = promptNow()
      for (const k of ['short', 'long']) {
        const r = caches[k].request(entries, now)
        totals[k].read += r.read
        totals[k].written += r.written
        if (r.broke) totals[k].breaks++
        if (k === 'short') out.prompt += r.prompt
      }
      sent(now)
      out.requests++
      out.output += outputTokens(m)
    }
    const length = session.length
    session.append(m)
    appended.push(session.get(m.id))
    if (m.role !== 'assistant') continue
    if (policy.everyStep && session.prune().prunedPartIDs.length > 0) {
      out.prunes++
      prompt = undefined
    }
    const step = await auto.afterStep()
    if (step.compaction?.status === 'compacted') {
      out.compactions++
      // The answer just appended (its tool output not read by the model yet) was summarized: an
      // agent runs the tool again and the model reads the output once more (`rerun`, billed as
      // those tokens written to the cache, the least that reading costs).
      if (!session.context().some((c) => c.id === m.id)) {
        out.unreadSummarized++
        out.rerun += toolOutputTokens(m)
      }
    } else if (step.compaction?.status === 'failed') out.failures++
    // Anything but this append (a compaction's messages, a prune) means building the prompt anew.
    if (step.compaction || step.pruned || session.length !== length + 1) prompt = undefined
  }
  return { ...out, cache: totals, tripped: auto.state.tripped?.kind }
}
