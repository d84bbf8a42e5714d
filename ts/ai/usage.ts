// The usage a step reports, as the context's size needs it. ai v5's Anthropic provider leaves the
// cache out of `inputTokens` (reads go to `cachedInputTokens`, writes only to provider metadata),
// unlike every other v5 provider and ai v6+: its raw `usage`, kept in the provider metadata, says
// all of it.

type Json = Record<string, unknown>
const obj = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null ? (v as Json) : undefined)

/** `usage` of a model call or step, or Anthropic's own report of it when the provider metadata has one. */
export function reportedUsage(usage: unknown, providerMetadata: unknown): unknown {
  const raw = obj(obj(obj(providerMetadata)?.anthropic)?.usage)
  return raw && typeof raw.input_tokens === 'number' ? raw : usage
}
