// contextfold/mastra: the Mastra integration. It imports the core, never the reverse, and never
// loads `@mastra/core` itself: the processor and the summarizer are typed structurally.
export {
  contextfoldProcessor,
  type ContextfoldProcessor,
  type ContextfoldProcessorOptions,
  type InputStepArgsLike,
  type LLMRequestArgsLike,
} from './processor.js'
export { mastraSummarizer, type AgentLike, type MastraSummarizerOptions } from './summarizer.js'
export type { ShouldCompactContext, Size } from '../ai/options.js'
export type { Summarizer } from '../types.js'
