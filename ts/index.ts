// contextfold: the native session (Rust, N-API) and the TypeScript compaction pipeline on top of it.
export * from './native.js'

export { compact, validateSummary, MAX_PROMPT_TOO_LONG_RETRIES } from './compact.js'
export {
  AutoCompactor,
  type AfterStepOptions,
  type AfterStepResult,
  type AutoCompactorEvent,
  type AutoCompactorEvents,
  type AutoCompactorListener,
  type AutoCompactorOptions,
  type AutoCompactorState,
} from './auto-compactor.js'
export {
  AbortError,
  AuthError,
  CompactError,
  InvalidArgumentError,
  InvalidSummaryError,
  NetworkError,
  PromptTooLongError,
  RateLimitError,
  ServerError,
  SummaryFailedError,
  UnknownModelError,
  UnsupportedModelError,
  classifyError,
  isAbortError,
  type CompactErrorCode,
  type CompactErrorOptions,
} from './errors.js'
export { continueMessage, continueText, replayMessage, unknownPart } from './messages.js'
export { LOCK_WAIT_MS, openLog, sessionFiles, type OpenSessionLog, type SessionLog } from './session-log.js'
export {
  BUDGET_INPUT_SCHEMA,
  budgetNotices,
  contextBudget,
  contextBudgetTool,
  type BudgetNoticeOptions,
  type BudgetNotices,
  type BudgetTool,
  type ContextBudget,
} from './budget.js'
export {
  CONTINUE_TEXT,
  MEDIA_NOTICE,
  SUMMARY_HEADER,
  SYSTEM_PROMPT,
  buildPrompt,
  buildTurnPrefixPrompt,
  frameSummary,
  unframeSummary,
  type FrameInput,
  type PromptInput,
} from './prompt.js'
export type { CompactionTrigger, TelemetryOptions } from './telemetry.js'
export { TEMPLATES, cleanAnswer, getTemplate, templateInstructions, type Template, type TemplateSection } from './templates.js'
export { extractiveSummarizer, extractiveSummary, isExtractive, parseSections, type ExtractiveOptions } from './summarizers/extractive.js'
export { openAICompatibleSummarizer, type OpenAICompatibleOptions } from './summarizers/openai-compatible.js'
export type {
  BeforeCompactContext,
  BeforeCompactResult,
  CompactHooks,
  CompactOptions,
  CompactionResult,
  LastRequest,
  RequestSettings,
  Summarizer,
  SummaryInputForm,
  SummaryRequest,
  SummaryResponse,
  TemplateName,
} from './types.js'
