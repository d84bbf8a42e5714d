// contextfold/opencode: the opencode plugin. It imports the core, never the reverse; from
// `@opencode-ai/plugin` it takes types only, so nothing of opencode is loaded at run time.
export { ContextfoldPlugin, createOpencodePlugin, OFF_SWITCH, type OpencodePluginOptions } from './plugin.js'
export { foldToolOutputs, type FoldOptions, type FoldResult } from './transform.js'
export { compactionFacts } from './facts.js'
export type { OpencodeMessage } from './messages.js'
