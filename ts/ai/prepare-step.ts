// `contextfoldPrepareStep`: context management for a tool loop the app runs (`generateText`,
// `streamText`, `ToolLoopAgent` / `Agent`), through their `prepareStep`. In ai v5 and v6 each step is
// rebuilt from the original messages, so the helper hands back the compacted messages on every
// step after a compaction (without summarizing again); in v7 the loop carries them forward and the
// helper continues from them.
import { usageFromProvider, type ModelMessageLike } from '../native.js'
import { Breakpoints } from './cache.js'
import { Engine } from './conversations.js'
import type { ModelRef } from './models.js'
import type { ContextfoldAiOptions, PromptCacheOptions } from './options.js'

export interface ContextfoldPrepareStepOptions extends ContextfoldAiOptions, Pick<PromptCacheOptions, 'cacheBreakpoints'> {
  /** The loop's model, when `prepareStep` is not given it (it always is in ai v5 to v7). */
  model?: ModelRef
  /** The loop's system prompt (`prepareStep` does not see it): counted in every step. */
  system?: string
  /**
   * The loop's tools (`prepareStep` does not see them): an AI SDK tool set, or JSON schemas,
   * counted as the provider receives their definitions.
   */
  tools?: unknown
  /** The loop's `maxOutputTokens` (`prepareStep` does not see it). */
  maxOutputTokens?: number
}

/** What `prepareStep` is called with, as far as the helper reads it (ai v5, v6, v7). */
export interface PrepareStepArgs<M = unknown> {
  messages: readonly M[]
  model?: unknown
  steps?: readonly { usage?: unknown; providerMetadata?: unknown }[]
  stepNumber?: number
  abortSignal?: AbortSignal
}

/** A JSON-able picture of a tool set: name, description and input schema of each tool. */
export function toolDefinitions(tools: unknown): unknown {
  if (Array.isArray(tools) || tools === null || typeof tools !== 'object') return tools
  return Object.entries(tools as Record<string, Record<string, unknown>>).map(([name, t]) => {
    const schema = (t?.inputSchema ?? t?.parameters) as Record<string, unknown> | undefined
    const json = schema?.jsonSchema ?? (typeof schema?.toJSONSchema === 'function' ? (schema.toJSONSchema as () => unknown)() : undefined)
    return { name, description: t?.description, inputSchema: json ?? null }
  })
}

/**
 * A `prepareStep` function: returns `{ messages }` compacted when the step would not fit (and on
 * every later step of that conversation), nothing otherwise. Same engine and options as
 * `contextfoldMiddleware`.
 *
 * @example
 * await generateText({ model, tools, messages, stopWhen: stepCountIs(50),
 *   prepareStep: contextfoldPrepareStep({ tools, maxOutputTokens: 4096 }) })
 */
/** A `prepareStep` function for the `ai` the app has: it hands back messages of the type it was given. */
export type ContextfoldPrepareStep = <M>(args: PrepareStepArgs<M>) => Promise<{ messages: M[] } | undefined>

export function contextfoldPrepareStep(options: ContextfoldPrepareStepOptions = {}): ContextfoldPrepareStep {
  const engine = new Engine(options, 'contextfoldPrepareStep')
  const breakpoints = new Breakpoints(options.cacheBreakpoints)
  // The message each copy carrying a breakpoint was made from: a loop that carries the handed
  // messages forward (ai v7) gives the copies back, and the conversation continues from the originals.
  const originals = new WeakMap<object, unknown>()
  const call = {
    ...(options.system ? { system: [options.system] } : {}),
    ...(options.tools !== undefined ? { tools: toolDefinitions(options.tools) } : {}),
    ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}),
  }
  return async <M>(args: PrepareStepArgs<M>): Promise<{ messages: M[] } | undefined> => {
    const model = (options.model ?? args.model) as ModelRef
    const messages = args.messages.map((m) => originals.get(m as object) ?? m) as unknown[] as ModelMessageLike[]
    if (!messages.length) return undefined
    const last = args.steps?.at(-1)
    const stepUsage = last && usageFromProvider(last.usage, last.providerMetadata)
    // The step as the model gets it: a summary in the conversation form sends it again, then its instructions.
    const request = {
      messages,
      ...(options.system ? { system: options.system } : {}),
      ...(options.tools !== undefined ? { tools: options.tools } : {}),
    }
    const prepared = await engine.call(messages, model, { ...call, request }, { ...(args.abortSignal ? { signal: args.abortSignal } : {}), ...(stepUsage !== undefined ? { stepUsage } : {}) })
    const base = prepared.messages ?? messages
    const marked = breakpoints.apply(base, [], prepared.conversation, model)
    marked.forEach((m, i) => m !== base[i] && originals.set(m as object, base[i]))
    if (marked !== base || prepared.messages) return { messages: marked as M[] }
    return undefined
  }
}
