// A context budget the model can see (opt-in): a tool in the AI SDK's shape that reports the
// context used and remaining, and notices at 50 / 75 / 90% of the usable window for the next request.
import type { Session } from './native.js'

/** What the budget tool returns. */
export interface ContextBudget {
  /** Tokens in the context now. */
  used: number
  /** Tokens the context may hold before it is compacted. */
  usable: number
  remaining: number
  /** `used / usable`, 0..1 (more once over). */
  fraction: number
  /** `ok`, `notice`, `prune` or `compact` (the session's pressure tier). */
  tier: string
}

/** The budget of `session` now. */
export function contextBudget(session: Session): ContextBudget {
  const u = session.usage()
  return {
    used: u.tokens,
    usable: u.usable,
    remaining: Math.max(0, u.usable - u.tokens),
    fraction: u.usable > 0 ? u.tokens / u.usable : 0,
    tier: u.tier,
  }
}

/** The tool's input schema: an object without properties (it takes no input). */
export const BUDGET_INPUT_SCHEMA = { type: 'object', properties: {}, additionalProperties: false } as const

/** The budget tool, in the AI SDK's shape: `{ description, inputSchema, execute }`. */
export interface BudgetTool<S> {
  description: string
  inputSchema: S
  execute: (input?: unknown) => Promise<ContextBudget>
}

/**
 * A tool (AI SDK shape, `ai` v5 and later) the model can call to see how much of its context is
 * used and how much remains. It takes no input. Pass the AI SDK's `jsonSchema` (so the schema is
 * the app's own `ai` version's, and contextfold imports nothing of it):
 * `tools: { context_budget: contextBudgetTool(session, jsonSchema) }`.
 */
export function contextBudgetTool<S>(session: Session, jsonSchema: (schema: typeof BUDGET_INPUT_SCHEMA) => S): BudgetTool<S> {
  return {
    description:
      'Reports how much of your context window is used and how much remains (tokens). Call it before large reads ' +
      'or outputs to decide whether to work in smaller pieces.',
    inputSchema: jsonSchema(BUDGET_INPUT_SCHEMA),
    execute: async () => contextBudget(session),
  }
}

/** Options of `budgetNotices`. */
export interface BudgetNoticeOptions {
  /** Shares of the usable window that trigger a notice (default 0.5, 0.75, 0.9). */
  thresholds?: number[]
}

/** Yields a short system note the first time the context crosses each threshold. */
export interface BudgetNotices {
  /**
   * The note to add to the next request as a system message, when the context crossed a threshold
   * since the last call (once per threshold; a compaction that brings usage back down re-arms the
   * thresholds above it); otherwise `undefined`.
   */
  next(): string | undefined
}

/** Notices at 50 / 75 / 90% of the usable window (opt-in), for the next request. */
export function budgetNotices(session: Session, options: BudgetNoticeOptions = {}): BudgetNotices {
  const thresholds = [...(options.thresholds ?? [0.5, 0.75, 0.9])].sort((a, b) => a - b)
  let reached = -1
  return {
    next() {
      const b = contextBudget(session)
      let k = -1
      thresholds.forEach((t, i) => {
        if (b.fraction >= t) k = i
      })
      if (k <= reached) {
        reached = k
        return undefined
      }
      reached = k
      const pct = Math.round((thresholds[k] ?? 0) * 100)
      return (
        `[Context budget] ${pct}% of your context window is used: ${b.used.toLocaleString('en')} of ` +
        `${b.usable.toLocaleString('en')} tokens, ${b.remaining.toLocaleString('en')} remaining. Prefer targeted reads and short outputs.`
      )
    },
  }
}
