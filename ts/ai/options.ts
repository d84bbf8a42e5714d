// Options shared by `contextfoldMiddleware` and `contextfoldPrepareStep`.
import type { CacheOptions, CompactionConfig, ContextUsage, ImportWarning, ModelCost, ModelMessageLike, SessionOptions, TokenizerName } from '../native.js'
import type { AutoCompactorOptions } from '../auto-compactor.js'
import type { SessionStore } from '../session-log.js'
import type { CompactionResult } from '../types.js'

/** What `shouldCompact` sees before each model call. */
export interface ShouldCompactContext {
  /** The conversation's usage with the call's system prompt, tools and output reserve counted. */
  usage: ContextUsage
  /** Messages of the conversation (ModelMessages taken so far). */
  messageCount: number
  /** The model's context window. */
  contextWindow: number
}

/** A size: tokens, or a fraction of the usable window (as LangChain's `summarizationMiddleware` takes). */
export type Size = number | { fraction: number } | { tokens: number }

export interface ContextfoldAiOptions
  extends Pick<
    AutoCompactorOptions,
    'summarizer' | 'template' | 'instructions' | 'focus' | 'hooks' | 'fallback' | 'audit' | 'maxFailures' | 'maxIneffective' | 'prune' | 'summaryInput' | 'compactAt' | 'telemetry'
  > {
  /** The model's context window in tokens. Required unless the model is in the catalog (`modelInfo`). */
  contextWindow?: number
  /**
   * Output tokens to keep free when the call does not say (`maxOutputTokens` of the call wins).
   * Default: the catalog's output limit, capped at 32,000, or 4,096 for an unknown model.
   */
  maxOutputTokens?: number
  /** Counting: `o200k` / `cl100k` (exact) or `estimate`. Default: exact for OpenAI-family models. */
  tokenizer?: TokenizerName
  /** Compact when usage reaches this (default: the AutoCompactor's, i.e. the cheapest threshold under the `cache` prune policy, else at overflow). */
  trigger?: Size
  /** Tokens of the newest messages kept verbatim after a compaction (default: contextfold's rule). */
  keep?: Size
  /** More compaction settings (prune rules, tool output limits...). */
  compaction?: CompactionConfig
  /**
   * The provider's prompt cache, for the cache-aware prune policy (`prune: 'cache'`, the default):
   * its lifetime (`ttl`, default 5 minutes) and prices (default: the catalog's for the model).
   */
  cache?: CacheOptions
  /** Decides, before each call, whether to compact now (overrides `trigger`). */
  shouldCompact?: (ctx: ShouldCompactContext) => boolean
  /** Called after each compaction. */
  onCompaction?: (event: { result: CompactionResult; conversation: string }) => void
  /** Conversations held at once (least recently used dropped first; default 100). */
  maxConversations?: number
  /**
   * Where conversations are kept, so that one survives a restart and every process serving it
   * finds its compaction (summarized once, sent by all): `fileStore(dir)` from `contextfold`,
   * or `(id) => PostgresSession.open({ pool, id })` / `RedisSession.open(...)`. Each
   * call opens the conversation's log (waiting while another process writes it), loads it
   * tail-first, writes what the call changed and closes it. Default: memory only.
   */
  store?: SessionStore
  /**
   * The id of the conversation a call's messages belong to (the store's session id). Default: a
   * call's `providerOptions.contextfold.conversationId`, else a digest of the first message. Give
   * one when conversations of your app can start with the same message.
   */
  conversationId?: (messages: readonly ModelMessageLike[]) => string
  /** Parts kept as they came because contextfold does not know them, and other notes, per conversation. */
  onWarning?: (event: { warning: ImportWarning; conversation: string }) => void
}

/** Prompt caching options of `contextfoldMiddleware` (`cacheBreakpoints` also of `contextfoldPrepareStep`). */
export interface PromptCacheOptions {
  /**
   * On a call to an Anthropic model (`provider` `anthropic.*`, or Vertex's `vertex.anthropic.*`),
   * `providerOptions.anthropic.cacheControl` on the prompt's messages at the points that stay put
   * from one call to the next: the system prompt (cached with the tools), the newest summary, the
   * newest prune mark, and the last message; at most 4 with those the app set itself, which are
   * kept. Default `true` (`{ type: 'ephemeral' }`); `{ ttl: '1h' }` for the 1-hour cache; `false`
   * for none.
   */
  cacheBreakpoints?: boolean | { ttl?: '5m' | '1h' }
  /**
   * On a call to an OpenAI model (`provider` `openai.*`), `providerOptions.openai.promptCacheKey`
   * (unless the call sets one): `true` for the conversation's id (the one a call names, else
   * `conversationId`, else a digest of its first message), or a function of that id. Default off.
   */
  promptCacheKey?: boolean | ((conversation: string) => string)
}

/** Tokens `size` stands for in a window of `usable` tokens. */
export function tokensOf(size: Size, usable: number): number {
  if (typeof size === 'number') return size
  return 'fraction' in size ? Math.floor(size.fraction * usable) : size.tokens
}

/** The session options of a conversation on `model` with `window` tokens. */
export function sessionOptions(
  options: ContextfoldAiOptions,
  model: { providerID?: string; modelID?: string; cost?: ModelCost },
  window: number,
  maxOutput: number,
): SessionOptions {
  const usable = Math.max(0, window - maxOutput)
  const compaction: CompactionConfig = { ...options.compaction }
  if (options.keep !== undefined) compaction.preserveRecentTokens = tokensOf(options.keep, usable)
  const out: SessionOptions = { model: { ...model, limit: { context: window, output: maxOutput } }, compaction }
  if (options.tokenizer) out.tokenizer = options.tokenizer
  if (options.cache) out.cache = options.cache
  return out
}
