// Session options from the command line: the model window (--context, --output), the tokenizer, and
// the provider's prices and cache lifetime (--prices, --cache-ttl).
import { tokenizerNames, type CacheOptions, type ModelCost, type SessionOptions, type TokenizerName } from '../native.js'

export const DEFAULT_CONTEXT = 200_000
/** Output tokens assumed when --output is not given: 32,000, at most a quarter of the window. */
export const DEFAULT_MAX_OUTPUT = 32_000

export const TOKENIZERS: readonly TokenizerName[] = tokenizerNames()

export function defaultOutput(context: number): number {
  return Math.min(DEFAULT_MAX_OUTPUT, Math.floor(context / 4))
}

/**
 * A token count: `30000`, `30_000`, `30,000`, `30k`, `1.5m`. Returns `undefined` when `text` is
 * not one (the caller reports it).
 */
export function parseTokens(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text.trim().replace(/[_,]/g, ''))
  if (!m) return undefined
  const scale = m[2]?.toLowerCase() === 'k' ? 1_000 : m[2]?.toLowerCase() === 'm' ? 1_000_000 : 1
  const n = Math.round(Number(m[1]) * scale)
  return Number.isSafeInteger(n) ? n : undefined
}

export interface WindowFlags {
  /** Given on the command line (else `undefined`). */
  context?: number
  output?: number
  tokenizer?: TokenizerName
  prices?: ModelCost
  cacheTtl?: CacheOptions['ttl']
}

/**
 * `--prices input,output[,cacheRead[,cacheWrite]]` in USD per million tokens (`3,15,0.3,3.75` for
 * Claude Sonnet); `undefined` when `text` is not that (the caller reports it).
 */
export function parsePrices(text: string): ModelCost | undefined {
  const n = text.split(',').map((x) => Number(x.trim()))
  if (n.length < 2 || n.length > 4 || n.some((x) => !Number.isFinite(x) || x < 0)) return undefined
  const out: ModelCost = { input: n[0]!, output: n[1]! }
  if (n[2] !== undefined) out.cacheRead = n[2]
  if (n[3] !== undefined) out.cacheWrite = n[3]
  return out
}

/** `--cache-ttl 5m`, `1h` or milliseconds. */
export function parseTtl(text: string): CacheOptions['ttl'] | undefined {
  const t = text.trim()
  if (t === '5m' || t === '1h') return t
  return /^\d+$/.test(t) ? Number(t) : undefined
}

/**
 * The options of the session the CLI builds. A store's recorded options are the base (its model,
 * compaction settings, tokenizer); flags given on the command line override them. Without a store,
 * the window is `--context` (default 200,000) with `--output` (default 32,000, at most a quarter
 * of the window) reserved for the answer.
 */
export function sessionOptions(flags: WindowFlags, recorded?: SessionOptions): SessionOptions {
  const base: SessionOptions = recorded
    ? structuredClone(recorded)
    : { model: { limit: { context: DEFAULT_CONTEXT } } }
  base.model = { ...base.model, limit: { ...base.model.limit } }
  if (flags.context !== undefined) base.model.limit.context = flags.context
  if (flags.output !== undefined) base.model.limit.output = flags.output
  else if (!recorded || flags.context !== undefined) base.model.limit.output = defaultOutput(base.model.limit.context)
  if (flags.tokenizer !== undefined) base.tokenizer = flags.tokenizer
  if (flags.prices || flags.cacheTtl !== undefined) {
    base.cache = { ...base.cache, ...(flags.prices ? { prices: flags.prices } : {}), ...(flags.cacheTtl !== undefined ? { ttl: flags.cacheTtl } : {}) }
  }
  return base
}
