// Type tests for the native contract (native.d.ts: generated from the Rust declarations, plus the
// hand-written shapes), checked by `tsc -p __test__/tsconfig.json` (npm run typecheck), never run:
// right uses compile; wrong roles, wrong formats and missing fields are errors.
import { compact, importTranscript, Session, SessionFile, toModelMessages, unknownPart, type CompactionResult, type CompactionConfig, type CompactionPlan, type ImportResult, type Message, type ModelMessage, type Part, type SessionOptions, type StoreOptions, type TranscriptFormat } from '../dist/index.js'
import { isStoreHeader, transcriptFormats, type AnthropicRequest, type OpenAIChatMessage, type PrepareOptions, type StoreHeader, type SummaryInput } from '../dist/native.js'

const model = { limit: { context: 200_000, output: 32_000 } }
const messages: Message[] = [{ id: 'u1', role: 'user', parts: [{ type: 'text', id: 'p1', text: 'hi' }] }]

export const options: SessionOptions[] = [
  { model },
  { model, tokenizer: 'o200k', compaction: { prune: 'cache', tailTurns: 2 }, cache: { ttl: '1h' } },
  { model: { ...model, cost: { input: 3, output: 15, cacheRead: 0.3 } }, compaction: { prune: false } },
  // @ts-expect-error the model is required
  { tokenizer: 'estimate' },
  // @ts-expect-error a window is required
  { model: { limit: {} } },
  // @ts-expect-error not a tokenizer
  { model, tokenizer: 'gpt2' },
  // @ts-expect-error not a prune policy
  { model, compaction: { prune: 'sometimes' } },
  // @ts-expect-error a cache lifetime is ms, '5m' or '1h'
  { model, cache: { ttl: '1d' } },
]

export const configs: CompactionConfig[] = [
  {},
  { reserved: 10_000, protectedTools: ['skill', 'todo'] },
  // @ts-expect-error a token budget is a number
  { preserveRecentTokens: '2k' },
]

export const messageTests: Message[] = [
  { id: 'a1', role: 'assistant', parts: [], tokens: { input: 1, output: 2 }, model: { providerID: 'p', modelID: 'm' } },
  // @ts-expect-error `tool` is an AI SDK role, not a message role
  { id: 't1', role: 'tool', parts: [] },
  // @ts-expect-error a message has an id
  { role: 'user', parts: [] },
  // @ts-expect-error usage needs input and output
  { id: 'a2', role: 'assistant', parts: [], tokens: { input: 1 } },
  // @ts-expect-error a misspelt field (`parentID`) is no field of a message
  { id: 'a3', role: 'assistant', parts: [], parentId: 'u1' },
  // @ts-expect-error not a part type
  { id: 'u2', role: 'user', parts: [{ type: 'txt', id: 'p', text: 'hi' }] },
  // @ts-expect-error a completed tool call has its output
  { id: 'a4', role: 'assistant', parts: [{ type: 'tool', id: 'p', callID: 'c', tool: 'read', state: { status: 'completed', input: {} } }] },
  // @ts-expect-error a part of another type is made with unknownPart()
  { id: 'a5', role: 'assistant', parts: [{ type: 'step-start', id: 'ss' }] },
  { id: 'a6', role: 'assistant', parts: [unknownPart({ type: 'step-start', id: 'ss', snapshot: 'abc' }), { type: 'text', id: 'p', text: 'hi' }] },
]

// A part's `type` narrows `Part`, unknown parts included (as `messages()` returns them).
export function texts(session: Session): string[] {
  return session.messages().flatMap((m) => m.parts.map((p) => (p.type === 'text' ? p.text : '')))
}
export function describePart(p: Part): string {
  switch (p.type) {
    case 'text':
    case 'reasoning':
      return p.text
    case 'tool':
      return p.state.status === 'completed' ? p.state.output : p.state.status
    case 'file':
      return p.url
    case 'compaction':
      return String(p.auto)
    default:
      // An unknown part: its type is a string at run time, opaque to TypeScript.
      // @ts-expect-error not a string to TypeScript
      return p.type
  }
}

// A result is told apart by its status: a compacted one has its summary and what it appended.
export async function compacted(session: Session): Promise<number> {
  const result: CompactionResult = await compact(session)
  // @ts-expect-error tokensAfter is there only once compacted
  const unknownYet: number = result.tokensAfter
  void unknownYet
  const summary: string | undefined = result.summary
  void summary
  if (result.status === 'failed') return result.error.code.length
  if (result.status !== 'compacted') return result.reason.length
  const appended: Message[] = result.messages
  return result.tokensAfter + result.summary.length + appended.length + result.plan.summarizedIDs.length
}

export const formats: TranscriptFormat[] = transcriptFormats()
export const imported: ImportResult = importTranscript({ text: '[]' }, { format: 'claude-code' })
// @ts-expect-error not a transcript format
importTranscript({ text: '[]' }, { format: 'claude' })

// The result type follows `format`.
export const aiSdk: ModelMessage[] = toModelMessages(messages)
export const anthropic: AnthropicRequest = toModelMessages(messages, { format: 'anthropic' })
export const openai: OpenAIChatMessage[] = toModelMessages(messages, { format: 'openai' })
// @ts-expect-error an Anthropic request is not a ModelMessage array
export const wrong: ModelMessage[] = toModelMessages(messages, { format: 'anthropic' })
// @ts-expect-error not a model format
toModelMessages(messages, { format: 'gemini' })

export const prepare: PrepareOptions[] = [
  { auto: true, upTo: 'm3' },
  // @ts-expect-error `upTo` names a message id
  { upTo: 3 },
]

export function plans(session: Session): [CompactionPlan, Message, Message] | null {
  const plan = session.prepareCompaction({ overflow: true })
  if (!plan) return null
  const summary: SummaryInput = { text: 'done', usage: { input: 10, output: 2 }, model: { providerID: 'p', modelID: 'm' } }
  // @ts-expect-error a summary has text
  const noText: SummaryInput = { usage: { input: 10, output: 2 } }
  void noText
  const [request, answer] = session.applyCompaction(plan, summary)
  return [plan, request, answer]
}

export const stores: StoreOptions[] = [
  { durability: 'batch', batchEntries: 16, session: { model } },
  // @ts-expect-error durability is 'entry' or 'batch'
  { durability: 'never' },
]

export function headers(store: SessionFile, line: string): StoreHeader | null {
  const header = store.header
  const version: number | undefined = header?.version
  void version
  return isStoreHeader(line) ? header : null
}
