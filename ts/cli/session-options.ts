// Session options from the command line: the model window (--context, --output) and the tokenizer.
import type { SessionOptions, TokenizerName } from '../../native.js'

export const DEFAULT_CONTEXT = 200_000
/** Output tokens assumed when --output is not given: 32,000, at most a quarter of the window. */
export const DEFAULT_MAX_OUTPUT = 32_000

export const TOKENIZERS: readonly TokenizerName[] = ['o200k', 'cl100k', 'estimate']

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
  return base
}
