// contextfold/ai: the AI SDK integration. It imports the core, never the reverse, and loads the
// app's `ai` only when a summary is asked for.
export { aiSdkSummarizer, type AiSdkSummarizerOptions, type GenerateTextLike, type LanguageModelLike } from './summarizer.js'
export type { Summarizer } from '../types.js'
