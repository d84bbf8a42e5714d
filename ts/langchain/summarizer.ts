// A summarizer over a LangChain chat model (`ChatOpenAI`, `ChatAnthropic`, `fakeModel()`...): the
// summary request in the transcript form, sent with the model's own `invoke`.
import { HumanMessage, SystemMessage, type AIMessage, type BaseMessage } from '@langchain/core/messages'

import { SummaryFailedError, throwIfAborted } from '../errors.js'
import type { Summarizer, SummaryResponse } from '../types.js'
import { textOfContent, usageOf } from './messages.js'

/** What the summarizer uses of a LangChain chat model. */
export interface ChatModelInvoker {
  invoke(messages: BaseMessage[], options?: { signal?: AbortSignal }): PromiseLike<unknown>
}

/** The provider's stop reasons that mean "cut off" (the summary is then rejected and retried or replaced). */
const CUT = new Set(['length', 'max_tokens', 'MAX_TOKENS'])

/**
 * A summarizer calling `model.invoke([system, prompt])`: the transcript form of the summary
 * request (its `system` and `prompt`), whatever `summaryInput` says. Give it a model bound to the
 * output budget you want (`new ChatOpenAI({ model, maxTokens })`). Errors are the provider's,
 * which `compact()` classifies; a cut-off answer (`finish_reason` / `stop_reason` `length` or
 * `max_tokens`) is reported as `length`.
 */
export function langchainSummarizer(model: ChatModelInvoker): Summarizer {
  return async (req, signal): Promise<SummaryResponse> => {
    throwIfAborted(signal)
    const answer = (await model.invoke([new SystemMessage(req.system), new HumanMessage(req.prompt)], signal ? { signal } : {})) as AIMessage | undefined
    throwIfAborted(signal)
    if (!answer || typeof answer !== 'object') throw new SummaryFailedError('the chat model returned nothing')
    const out: SummaryResponse = { text: textOfContent(answer.content) }
    const meta = (answer.response_metadata ?? {}) as Record<string, unknown>
    const stop = meta.finish_reason ?? meta.stop_reason
    if (typeof stop === 'string') out.finishReason = CUT.has(stop) ? 'length' : stop
    const usage = usageOf(answer)
    if (usage) out.usage = usage
    const id = meta.model_name ?? meta.model
    if (typeof id === 'string' && id) out.model = { providerID: 'langchain', modelID: id }
    return out
  }
}
