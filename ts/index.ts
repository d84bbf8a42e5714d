// contextfold: the native session (Rust, N-API) and the compaction pipeline on top of it. This entry
// holds what an app uses; the integrations are subpaths (`contextfold/ai`, `/pi`, `/opencode`,
// `/postgres`, `/redis`, `/effect`), and what only they need stays in the modules they import.

// The session and its messages.
export { Session, SessionFile, countTokens, filterCompacted, importTranscript, importTranscriptAsync, toModelMessages } from './native.js'
export type {
  Audit,
  CompactionConfig,
  CompactionPart,
  CompactionPlan,
  CompactionPreview,
  ContextUsage,
  FilePart,
  ImportOptions,
  ImportResult,
  Message,
  ModelMessage,
  Part,
  PrunePolicy,
  PruneResult,
  ReasoningPart,
  SessionOptions,
  StoreOptions,
  TextPart,
  ToolPart,
  ToolState,
  TranscriptFormat,
  TranscriptSource,
  UnknownPart,
  Usage,
} from './native.js'
export { unknownPart } from './messages.js'

// Compaction and the summarizers.
export { compact } from './compact.js'
export { AutoCompactor, type AutoCompactorEvent, type AutoCompactorOptions } from './auto-compactor.js'
export { extractiveSummarizer, type ExtractiveOptions } from './summarizers/extractive.js'
export { openAICompatibleSummarizer, type OpenAICompatibleOptions } from './summarizers/openai-compatible.js'
export type { CompactHooks, CompactOptions, CompactionResult, Summarizer, SummaryRequest, SummaryResponse, TemplateName } from './types.js'

// Stores: one session's log, and the store of many sessions.
export { fileStore, type SessionLog, type SessionStore } from './session-log.js'

// The agent's own view of its budget.
export { budgetNotices, contextBudget, contextBudgetTool, type BudgetTool, type ContextBudget } from './budget.js'

// Errors and telemetry.
export { ContextfoldError, isContextfoldError, type ErrorCode } from './errors.js'
export type { TelemetryOptions } from './telemetry.js'
