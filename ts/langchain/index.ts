// contextfold/langchain: the LangChain.js v1 integration (`createAgent` middleware). It imports the
// core, never the reverse; `langchain` and `@langchain/core` are optional peers loaded only here.
export { contextfoldLangChain, type ContextfoldLangChainOptions } from './middleware.js'
export { langchainSummarizer, type ChatModelInvoker } from './summarizer.js'
export type { ShouldCompactContext, Size } from '../ai/options.js'
export type { Summarizer } from '../types.js'
