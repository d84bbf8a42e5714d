// What the docs' TypeScript blocks use without declaring it: the app's own values that the prose
// around a block speaks of (its model, tools, messages, session, database clients, UI). Nothing of
// contextfold's own API belongs here: a block imports what it uses of it. A block that declares or
// imports one of these names shadows it.
/** The app's model object, e.g. `openai('gpt-4o')`. */
declare const model: Exclude<import('ai').LanguageModel, string>
declare const tools: import('ai').ToolSet
declare const system: string
declare const messages: import('ai').ModelMessage[]
declare const chatId: string
declare const signal: AbortSignal
/** The app's session, made with `new Session(...)` or loaded from a store. */
declare const session: import('contextfold').Session
/** A message the agent just produced or received. */
declare const message: import('contextfold').Message
/** The app's node-postgres pool and ioredis client. */
declare const pool: import('pg').Pool
declare const client: import('ioredis').Redis
/** The app's user interface. */
declare const ui: {
  reviewing: boolean
  meter(pressure: number): void
  note(text: string): void
  warn(text: string): void
  showCompaction(result: unknown): void
}
