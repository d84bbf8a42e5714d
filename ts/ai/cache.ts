// Prompt caching through providerOptions: Anthropic cache breakpoints where the session places
// them (`Session.cacheBreakpoints`), shared by the middleware and `prepareStep`.
import type { ModelMessageLike } from '../native.js'
import type { Conversation } from './conversations.js'
import type { ModelRef } from './models.js'
import type { PromptCacheOptions } from './options.js'

/** The provider a call goes to (`anthropic.messages`, `openai.responses`...), if the model says. */
export function providerOf(model: ModelRef): string {
  return typeof model === 'string' ? '' : model.provider
}

/** Anthropic's own provider, and Vertex's Anthropic models (`vertex.anthropic.messages`). */
export function isAnthropic(model: ModelRef): boolean {
  return /^(vertex\.)?anthropic/.test(providerOf(model))
}

/** Anthropic's limit of `cache_control` breakpoints per request. */
export const MAX_BREAKPOINTS = 4

/** `m` with `providerOptions[provider][key] = value`, the rest of its options kept. */
export function withOption<T extends { providerOptions?: Record<string, unknown> }>(m: T, provider: string, key: string, value: unknown): T {
  const own = (m.providerOptions?.[provider] ?? {}) as Record<string, unknown>
  return { ...m, providerOptions: { ...m.providerOptions, [provider]: { ...own, [key]: value } } }
}

/** Places Anthropic cache breakpoints on the prompts of calls to Anthropic models (unless turned off). */
export class Breakpoints {
  readonly #control: { type: 'ephemeral'; ttl?: '5m' | '1h' } | undefined

  constructor(option: PromptCacheOptions['cacheBreakpoints']) {
    const on = option ?? true
    this.#control = on === false ? undefined : typeof on === 'object' && on.ttl ? { type: 'ephemeral', ttl: on.ttl } : { type: 'ephemeral' }
  }

  /**
   * `prompt` (the app's `system` messages, then the conversation's) with breakpoints, for a call to
   * `model`; the same array when none are due. Each marked message is a copy.
   */
  apply(prompt: readonly unknown[], system: readonly unknown[], c: Conversation, model: ModelRef): readonly unknown[] {
    if (!this.#control || !isAnthropic(model)) return prompt
    const out = [...prompt]
    for (const { index } of c.session.cacheBreakpoints(system as ModelMessageLike[])) {
      if (index < out.length) out[index] = withOption(out[index] as ModelMessageLike, 'anthropic', 'cacheControl', this.#control)
    }
    return out
  }
}
