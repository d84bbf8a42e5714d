// A LangChain.js v1 agent (the real `createAgent`) playing the AI SDK loop of ai-loop.ts with
// @langchain/core's `fakeModel()`: 5 tools, 35 steps, tool outputs of 1.5k-8k o200k tokens (150k+
// in all) in a 32k window. Every prompt the model receives is checked: it fits (counted exactly,
// system prompt and tools included), no tool call lacks its result, the request is there verbatim.
import { AIMessage, type BaseMessage, type ToolMessage } from '@langchain/core/messages'
import { fakeModel } from '@langchain/core/testing'
import { convertToOpenAITool } from '@langchain/core/utils/function_calling'
import { tool } from 'langchain'
import { z } from 'zod'

import { Session } from '../dist/index.js'
import type { ModelMessageLike } from '../dist/native.js'
import { MAX_OUTPUT, REQUEST, STEPS, SYSTEM, TOOLS, UNPRUNED, WINDOW, toolOutput } from './ai-loop.js'

export { MAX_OUTPUT, REQUEST, STEPS, SYSTEM, TOOLS, UNPRUNED, WINDOW, toolOutput }

export const loopTools = TOOLS.map((name) =>
  tool(async ({ step }: { step: number }) => toolOutput(step), { name, description: `The ${name} tool.`, schema: z.object({ step: z.number() }) }),
)
const definitions = loopTools.map((t) => convertToOpenAITool(t))

export interface LoopSeen {
  prompts: BaseMessage[][]
  problems: string[]
  tokens: number[]
}

const text = (c: unknown): string =>
  typeof c === 'string' ? c : Array.isArray(c) ? c.map((b: any) => (b?.type === 'text' ? b.text : b?.type === 'thinking' ? b.thinking : '')).join('') : ''

/** A prompt's tokens as the provider reads it: an independent conversion (text, tool calls, tool outputs), o200k, system prompt and tools counted. */
export function promptTokens(prompt: readonly BaseMessage[]): number {
  const system: string[] = []
  const messages: ModelMessageLike[] = []
  for (const m of prompt) {
    if (m.type === 'system') system.push(text(m.content))
    else if (m.type === 'human') messages.push({ role: 'user', content: text(m.content) })
    else if (m.type === 'ai') {
      const a = m as AIMessage
      const parts: unknown[] = text(a.content) ? [{ type: 'text', text: text(a.content) }] : []
      for (const c of a.tool_calls ?? []) parts.push({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: c.args })
      messages.push({ role: 'assistant', content: parts })
    } else if (m.type === 'tool') {
      const t = m as ToolMessage
      const part = { type: 'tool-result', toolCallId: t.tool_call_id, toolName: t.name ?? 'tool', output: { type: 'text', value: text(t.content) } }
      const last = messages[messages.length - 1]
      if (last?.role === 'tool') (last.content as unknown[]).push(part)
      else messages.push({ role: 'tool', content: [part] })
    }
  }
  const s = Session.fromModelMessages(messages, { model: { limit: { context: WINDOW, output: MAX_OUTPUT } }, tokenizer: 'o200k' })
  s.setOverhead({ system, tools: definitions })
  return s.usage().tokens
}

/** Checks a prompt the model received. */
export function check(prompt: BaseMessage[], seen: LoopSeen): number {
  const n = seen.prompts.length
  seen.prompts.push(prompt)
  const tokens = promptTokens(prompt)
  seen.tokens.push(tokens)
  if (tokens > WINDOW - MAX_OUTPUT) seen.problems.push(`call ${n}: ${tokens} tokens do not fit`)
  const results = new Set(prompt.filter((m) => m.type === 'tool').map((m) => (m as ToolMessage).tool_call_id))
  for (const m of prompt) {
    for (const c of (m as AIMessage).tool_calls ?? []) if (!results.has(c.id!)) seen.problems.push(`call ${n}: tool call ${c.id} without its result`)
  }
  if (!JSON.stringify(prompt.map((m) => m.content)).includes(REQUEST)) seen.problems.push(`call ${n}: the request is not there verbatim`)
  return tokens
}

/**
 * The loop's model: a tool call per step, each answer carrying an Anthropic thinking block with its
 * signature (and, on the first, a block no one knows), then a final answer; usage as measured.
 */
export function loopModel(seen: LoopSeen, steps = STEPS) {
  const model = fakeModel()
  for (let i = 0; i <= steps; i++) {
    model.respond((messages) => {
      const input = check(messages, seen)
      const usage_metadata = { input_tokens: input, output_tokens: 20, total_tokens: input + 20 }
      if (i === steps) return new AIMessage({ content: 'Audit done.', usage_metadata })
      const content: any[] = [{ type: 'thinking', thinking: `Step ${i}: next, the ${TOOLS[i % TOOLS.length]} tool.`, signature: `sig-${i}` }]
      if (i === 0) content.push({ type: 'x-provider-note', note: 'kept as it came' })
      return new AIMessage({ content, tool_calls: [{ id: `call-${i}`, name: TOOLS[i % TOOLS.length]!, args: { step: i }, type: 'tool_call' }], usage_metadata })
    })
  }
  return model
}
