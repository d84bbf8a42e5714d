// contextfold/pi: the pi coding agent extension. It imports the core, never the reverse, and loads
// pi-ai only when a summary is written on a pi whose model registry cannot call the model itself.
import { createPiExtension } from './extension.js'
import type { PiExtensionAPI } from './types.js'

export { beforeCompact, createPiExtension } from './extension.js'
export { pruneContext } from './prune.js'
export { importEntries } from './session.js'
export { piModelSummarizer } from './summarizer.js'
export type { PiCompactionDetails, PiExtensionAPI, PiExtensionOptions } from './types.js'
export type { Summarizer } from '../types.js'

/**
 * The pi extension with its defaults: pi's compaction runs through contextfold, the summary written
 * by the session's model. `export { default } from 'contextfold/pi'` in `.pi/extensions/contextfold.ts`
 * installs it; `createPiExtension(options)` makes a configured one.
 */
const contextfold: (pi: PiExtensionAPI) => void = createPiExtension()
export default contextfold
