// Type tests for `contextfold/ai`, checked by `tsc -p __test__/tsconfig.json` (npm run typecheck),
// never run: `generateText` of ai v5, v6 and v7 is accepted under `strict`; wrong uses are errors.
import { generateObject, generateText as generateText5, streamText } from 'ai'
import { MockLanguageModelV2 } from 'ai/test'
import { generateText as generateText6 } from 'ai-v6'
import { MockLanguageModelV3 } from 'ai-v6/test'
import { generateText as generateText7 } from 'ai-v7'
import { MockLanguageModelV4 } from 'ai-v7/test'

import { aiSdkSummarizer, type Summarizer } from '../dist/ai/index.js'

export const typeTests: Summarizer[] = [
  aiSdkSummarizer(new MockLanguageModelV2(), { generateText: generateText5 }),
  aiSdkSummarizer(new MockLanguageModelV3(), { generateText: generateText6, maxRetries: 1 }),
  aiSdkSummarizer(new MockLanguageModelV4(), { generateText: generateText7, providerOptions: { openai: { store: false } } }),
  aiSdkSummarizer('openai/gpt-5-mini'),
  // @ts-expect-error streamText returns a stream result, not a promise of a result with text
  aiSdkSummarizer('m', { generateText: streamText }),
  // @ts-expect-error generateObject's result has no text
  aiSdkSummarizer('m', { generateText: generateObject }),
  // @ts-expect-error generateText must be a function
  aiSdkSummarizer('m', { generateText: 42 }),
  // @ts-expect-error a model is a model object or a model id
  aiSdkSummarizer(42),
  // @ts-expect-error a model object has a specification version, a provider and a model id
  aiSdkSummarizer({ modelId: 'x' }),
]

// The middleware fits `wrapLanguageModel` of every major, and the helper fits `prepareStep`.
import { wrapLanguageModel as wrap5 } from 'ai'
import { wrapLanguageModel as wrap6 } from 'ai-v6'
import { wrapLanguageModel as wrap7 } from 'ai-v7'

import { contextfoldMiddleware, contextfoldPrepareStep } from '../dist/ai/index.js'

const v2 = wrap5({ model: new MockLanguageModelV2(), middleware: contextfoldMiddleware({ contextWindow: 128_000 }) })
const v3 = wrap6({ model: new MockLanguageModelV3(), middleware: contextfoldMiddleware({ trigger: { fraction: 0.8 }, keep: { tokens: 8_000 } }) })
const v4 = wrap7({ model: new MockLanguageModelV4(), middleware: contextfoldMiddleware({ shouldCompact: ({ usage }) => usage.pressure > 0.9 }) })
export const typeTestCalls = [
  generateText5({ model: v2, prompt: 'x', prepareStep: contextfoldPrepareStep({ maxOutputTokens: 4096 }) }),
  generateText6({ model: v3, prompt: 'x', prepareStep: contextfoldPrepareStep() }),
  generateText7({ model: v4, prompt: 'x', prepareStep: contextfoldPrepareStep({ system: 'terse', tools: {} }) }),
]
// @ts-expect-error a trigger is tokens or a fraction of the window
contextfoldMiddleware({ trigger: 'soon' })
// @ts-expect-error shouldCompact answers with a boolean
contextfoldMiddleware({ shouldCompact: () => 'yes' })
