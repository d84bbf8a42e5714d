// contextfold/ai: the AI SDK integration. It imports the core, never the reverse, and loads the
// app's `ai` only when a summary is asked for, and the model catalog only when `modelInfo` is called.
export { aiSdkSummarizer, type AiSdkSummarizerOptions } from './summarizer.js'
export { modelInfo, type CatalogModelInfo, type ModelCost, type ModelInfoOptions, type ModelRef } from './models.js'
export { contextfoldMiddleware, type ContextfoldMiddleware } from './middleware.js'
export { contextfoldPrepareStep, toolDefinitions, type ContextfoldPrepareStep, type ContextfoldPrepareStepOptions } from './prepare-step.js'
export type { ContextfoldAiOptions, PromptCacheOptions, ShouldCompactContext, Size } from './options.js'
export type { Summarizer } from '../types.js'
