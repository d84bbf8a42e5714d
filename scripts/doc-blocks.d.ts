// What the docs' TypeScript blocks use without declaring it: the values the prose around a block
// speaks of (the app's model, tools, messages, session). A block that declares or imports one of
// these names shadows it.
declare const model: import('ai').LanguageModel
declare const tools: import('ai').ToolSet
declare const system: string
declare const messages: import('ai').ModelMessage[]
declare const chatId: string
declare const signal: AbortSignal
