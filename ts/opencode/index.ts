// contextfold/opencode: the opencode plugin. It imports the core, never the reverse; from
// `@opencode-ai/plugin` it takes types only, so nothing of opencode is loaded at run time.
export { ContextfoldPlugin, createOpencodePlugin, OFF_SWITCH, type OpencodePluginOptions } from './plugin.js'
export { DEFAULT_PRUNE, foldToolOutputs, type FoldOptions, type FoldResult, type PruneOptions } from './transform.js'
export { FACTS_HEADER, compactionFacts } from './facts.js'
export { ineffectiveCompactions, thrashReason } from './breaker.js'
export type { OpencodeMessage, OpencodePart, OpencodeToolPart } from './messages.js'
