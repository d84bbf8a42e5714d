/*
 * The shapes below are written by hand; every other type of this file is generated from its Rust
 * declaration (src/typings.rs). What is here cannot be generated:
 * - the message model (Message, its parts, ToolState): contextfold keeps every field and part type
 *   it does not know as it came, but the types name only the known ones, so that a misspelt field
 *   or part type is a compile error and `part.type === 'text'` narrows; a part of another type is
 *   an `UnknownPart`, whose opaque `type` keeps it out of that narrowing (`unknownPart()` makes one).
 *   `Part` is read by a hand-written deserializer (unknown part types are kept);
 * - what `toModelMessages` returns (ModelMessage, AnthropicRequest, OpenAIChatMessage): written by
 *   streaming JSON writers, not from Rust types, and chosen by `format` through the conditional
 *   type `ConvertResult<F>`, which no generator writes;
 * - `ConvertOptions<F>`: the generated `ConvertFields` with `format` generic, so that the result
 *   type follows it;
 * - the inputs typed loosely on purpose (ModelMessageLike, AppendModelMessagesOptions, Overhead):
 *   any AI SDK version's messages and usage, any JSON-able tool description.
 */

/** A message of the canonical model (opencode-like: a tool call and its result are one part). */
export interface Message {
  id: string
  role: 'user' | 'assistant' | 'system'
  parts: Part[]
  time?: { created: number; completed?: number }
  /** Assistant: the user message it answers (a summary: its compaction request). */
  parentID?: string
  /** An assistant message that holds a compaction summary. */
  summary?: boolean
  /**
   * A summary's: the latest request, restated as a user message right after it because the kept
   * tail holds none (`applyCompaction` writes it); the context ends on a user turn, never on the
   * summary.
   */
  latestRequest?: string
  /** A summary counts only if finished and without error. */
  finish?: string
  error?: { name: string; message: string }
  /** Provider-reported usage (assistant). */
  tokens?: Usage
  model?: ModelRef
}

export interface TextPart { type: 'text'; id: string; text: string; synthetic?: boolean }

export interface ReasoningPart { type: 'reasoning'; id: string; text: string }

export interface FilePart {
  type: 'file'; id: string; mime: string; url: string; filename?: string
  /** Cleared from the context by the agent that wrote an imported transcript (epoch ms): kept, but reads as `[Cleared <mime>: <filename>]`. */
  compactedAt?: number
}

export interface ToolPart { type: 'tool'; id: string; callID: string; tool: string; state: ToolState }

/** Hides `[hiddenFromID or the start, tailStartID)`; without `tailStartID`, everything before the request. */
export interface CompactionPart {
  type: 'compaction'; id: string; auto: boolean; overflow?: boolean; hiddenFromID?: string; tailStartID?: string
  /** Files read (only) and modified up to this compaction, cumulative: the next one carries them over. */
  files?: CompactionFiles
  /** What the next compaction's summary must keep, carried over (`applyCompaction` writes it). */
  keep?: Fact[]
  /** The session's pins when it was recorded. */
  pins?: Pin[]
  /** The loss audit of its summary. */
  audit?: Omit<Audit, 'section'>
  /** Why the summarizer's answer was not used: the summary is the extractive one (`compact()`'s fallback). */
  fallback?: string
}

declare const unknownPartType: unique symbol
/** The `type` of an `UnknownPart`: a string at run time (`String(part.type)`), opaque to TypeScript. */
export interface UnknownPartType { readonly [unknownPartType]: 'a part type contextfold does not know' }

/**
 * A part of a type contextfold does not know: kept as it came (an id is optional), ignored by
 * conversion and counting, except in messages taken from AI SDK ModelMessages, which send it as it came.
 */
export interface UnknownPart { type: UnknownPartType; id?: string; [key: string]: unknown }

export type Part = TextPart | ReasoningPart | FilePart | ToolPart | CompactionPart | UnknownPart

export type ToolState =
  | { status: 'pending' | 'running'; input: unknown }
  | {
      status: 'completed'; input: unknown; output: string; title?: string
      /** The prune mark (epoch ms): the output is kept but reads as cleared. */
      compactedAt?: number
      attachments?: Omit<FilePart, 'type'>[] | FilePart[]
    }
  | {
      status: 'error'; input: unknown; error: string
      /** Cleared from the context by the agent that wrote an imported transcript (epoch ms): kept, but reads as cleared. */
      compactedAt?: number
    }

/** Options of `toModelMessages`: `ConvertFields`, with `format` typed so that the result type follows it. */
export type ConvertOptions<F extends ModelFormat = ModelFormat> = Omit<ConvertFields, 'format'> & {
  /** `'ai-sdk'` (default): `ModelMessage[]`; `'anthropic'`: `AnthropicRequest`; `'openai'`: `OpenAIChatMessage[]`. */
  format?: F
}

/** AI SDK `ModelMessage` (structurally compatible with `ai` v5 and later). */
export type ModelMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: Array<
      | { type: 'text'; text: string }
      | { type: 'image'; image: string; mediaType: string }
      | { type: 'file'; data: string; mediaType: string; filename?: string }> }
  | { role: 'assistant'; content: Array<
      | { type: 'text'; text: string }
      | { type: 'reasoning'; text: string }
      | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown }> }
  | { role: 'tool'; content: Array<{
      type: 'tool-result'; toolCallId: string; toolName: string
      output:
        | { type: 'text'; value: string }
        | { type: 'error-text'; value: string }
        | { type: 'content'; value: Array<{ type: 'text'; text: string } | { type: 'media'; data: string; mediaType: string }> }
    }> }

/** What `toModelMessages` returns for each `format`. */
export type ConvertResult<F extends ModelFormat = 'ai-sdk'> = F extends 'anthropic'
  ? AnthropicRequest
  : F extends 'openai'
    ? OpenAIChatMessage[]
    : ModelMessage[]

/** Anthropic Messages API source of an image or document. */
export type AnthropicSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string }

/** An Anthropic prompt-cache breakpoint. */
export interface AnthropicCacheControl { type: 'ephemeral'; ttl?: '5m' | '1h' }

export type AnthropicContentBlock = (
  | { type: 'text'; text: string }
  | { type: 'image'; source: AnthropicSource }
  | { type: 'document'; source: AnthropicSource; title?: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content?: Array<{ type: 'text'; text: string } | { type: 'image'; source: AnthropicSource }>; is_error?: boolean }
) & { cache_control?: AnthropicCacheControl }

/** Anthropic Messages API request body parts: starts with a user message, roles alternate. */
export interface AnthropicRequest {
  /** A string, or text blocks (one per system message) when a breakpoint is on the system prompt. */
  system?: string | Array<{ type: 'text'; text: string; cache_control?: AnthropicCacheControl }>
  messages: Array<{ role: 'user' | 'assistant'; content: AnthropicContentBlock[] }>
}

/** OpenAI chat completions message. */
export type OpenAIChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | Array<
      | { type: 'text'; text: string }
      | { type: 'image_url'; image_url: { url: string } }
      | { type: 'file'; file: { filename?: string; file_data: string } }> }
  | { role: 'assistant'; content: string | null; tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> }
  | { role: 'tool'; tool_call_id: string; content: string }

/**
 * An AI SDK `ModelMessage` (ai v5, v6 or v7: `import type { ModelMessage } from 'ai'`), or a
 * message of a language model's prompt (what a middleware's `transformParams` sees). Typed loosely
 * so that contextfold's typings do not need `ai`; every field and part is kept as it came.
 */
export interface ModelMessageLike {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: unknown
  providerOptions?: Record<string, Record<string, unknown>>
  [key: string]: unknown
}

export interface AppendModelMessagesOptions {
  /**
   * The provider usage of the step that produced these messages, in any shape (AI SDK v5, v6 and
   * v7 step usage, the provider specification's nested usage, OpenAI, Anthropic): it goes on the
   * last assistant message and calibrates the counts.
   */
  usage?: unknown
}

/** What the provider receives besides the messages. */
export interface Overhead {
  /** The system prompt(s). */
  system?: string | string[]
  /** Tool definitions as sent: JSON schemas, or any JSON-able description of the tools. */
  tools?: unknown
}
