// A summarizer over a Mastra agent's `generate`: the summary call goes through Mastra's own model
// resolution, so a router id (`'openai/gpt-5-mini'`) works without the AI SDK installed.
import { summaryOf } from '../ai/summarizer.js'
import { throwIfAborted } from '../errors.js'
import type { Summarizer, SummaryResponse } from '../types.js'

/** A Mastra `Agent`, as far as the summarizer calls it (typed structurally). */
export interface AgentLike {
  generate(messages: never, options?: never): PromiseLike<unknown>
}

export interface MastraSummarizerOptions {
  /** Any other `generate` options (`modelSettings`, `providerOptions`...). */
  settings?: Record<string, unknown>
}

type Json = Record<string, unknown>
const obj = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null ? (v as Json) : undefined)

/**
 * A summarizer calling `agent.generate([{ role: 'user', content: prompt }], { instructions: system,
 * modelSettings: { maxOutputTokens }, abortSignal })`: the transcript form of the summary request.
 * Give it an agent of its own, without memory or processors (`new Agent({ id: 'summarizer', name:
 * 'summarizer', instructions: '', model: 'openai/gpt-5-mini' })`), so that the summary call is not
 * stored in a thread. Errors are the agent's, which `compact()` classifies.
 */
export function mastraSummarizer(agent: AgentLike, options: MastraSummarizerOptions = {}): Summarizer {
  return async (req, signal): Promise<SummaryResponse> => {
    throwIfAborted(signal)
    const settings = options.settings ?? {}
    const modelSettings = { ...obj(settings.modelSettings), ...(req.maxOutputTokens !== undefined ? { maxOutputTokens: req.maxOutputTokens } : {}) }
    const call: Json = { ...settings, instructions: req.system, modelSettings }
    if (signal) call.abortSignal = signal
    const answer = obj(await agent.generate([{ role: 'user', content: req.prompt }] as never, call as never))
    throwIfAborted(signal)
    const out = summaryOf(answer, 'agent.generate')
    const response = obj(answer!.response)
    if (typeof response?.modelId === 'string' && response.modelId) out.model = { providerID: 'mastra', modelID: response.modelId }
    return out
  }
}
