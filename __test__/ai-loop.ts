// A real AI SDK tool loop against the SDK's own mock model, for any major (v5, v6, v7): 5 tools,
// 35 steps, tool outputs of 1.5k-8k o200k tokens (150k+ in all), maxOutputTokens 4,096 and a 32k
// window, so the conversation overflows the window several times. The mock checks every prompt it
// receives: it fits the window (counted exactly, system prompt and tools included), no tool call
// lacks its result, the user's request is in a user message verbatim, and it never ends on the assistant.
import { Session } from '../dist/index.js'
import { type ModelMessageLike } from '../dist/native.js'

export const WINDOW = 32_000
export const MAX_OUTPUT = 4_096
export const STEPS = 35
export const TOOLS = ['read', 'grep', 'bash', 'list', 'test'] as const
export const REQUEST = 'Audit every module of the billing service and never touch the migrations folder.'
export const SYSTEM = 'You are a careful coding agent.'
/**
 * opencode's prune numbers for 200k windows: the age prune never fires in the specs' small windows,
 * so their loops compact (the defaults, scaled to such a window, prune them enough that they need not).
 */
export const UNPRUNED = { pruneProtect: 40_000, pruneMinimum: 20_000 } as const

/** The output of step `i`'s tool: 1.5k-8k tokens (` word` is one o200k token). */
export function toolOutput(i: number): string {
  const tokens = 1_500 + ((i * 1_777) % 6_500)
  return `output of step ${i}:` + ' word'.repeat(tokens)
}

export interface Major {
  name: string
  ai: Record<string, any>
  /** The mock model class (`MockLanguageModelV2` / `V3` / `V4`). */
  Mock: new (options: Record<string, unknown>) => any
  /** The specification generation: 'v2' results use flat usage and string finish reasons. */
  spec: 'v2' | 'v3'
  /** The agent class (`Experimental_Agent` in v5, `ToolLoopAgent` in v6 / v7). */
  Agent: new (settings: Record<string, unknown>) => { generate(options: Record<string, unknown>): Promise<any> }
}

/** What the mock saw: every prompt, and every problem with one. */
export interface Seen {
  prompts: unknown[][]
  problems: string[]
  /** Prompt tokens of each call, as counted. */
  tokens: number[]
}

function textOf(prompt: unknown[]): string {
  return JSON.stringify(prompt)
}

/** Checks a prompt the model received. */
function check(prompt: any[], tools: unknown, seen: Seen): void {
  const n = seen.prompts.length
  seen.prompts.push(prompt)
  const system = prompt.filter((m) => m.role === 'system').map((m) => m.content as string)
  const s = Session.fromModelMessages(prompt.filter((m) => m.role !== 'system') as ModelMessageLike[], {
    model: { limit: { context: WINDOW, output: MAX_OUTPUT } },
    tokenizer: 'o200k',
  })
  s.setOverhead({ system, tools })
  const tokens = s.usage().tokens
  seen.tokens.push(tokens)
  if (tokens > WINDOW - MAX_OUTPUT) seen.problems.push(`call ${n}: ${tokens} tokens do not fit`)
  for (let i = 0; i < prompt.length; i++) {
    const m = prompt[i]
    if (m.role !== 'assistant' || !Array.isArray(m.content)) continue
    for (const part of m.content) {
      if (part.type !== 'tool-call' || part.providerExecuted) continue
      const next = prompt[i + 1]
      const answered = next?.role === 'tool' && next.content.some((r: any) => r.type === 'tool-result' && r.toolCallId === part.toolCallId)
      if (!answered) seen.problems.push(`call ${n}: tool call ${part.toolCallId} without its result`)
    }
  }
  // After a compaction too: the request in a user message, and the prompt never ends on the
  // assistant (a summary last reads as a prefill to Anthropic).
  if (!prompt.some((m) => m.role === 'user' && textOf([m]).includes(REQUEST))) seen.problems.push(`call ${n}: the request is in no user message verbatim`)
  if (prompt[prompt.length - 1]?.role === 'assistant') seen.problems.push(`call ${n}: the prompt ends on an assistant message`)
}

/** A mock model playing the loop: a tool call per step (`steps` of them), then a final answer. */
export function scriptedModel(major: Major, seen: Seen, provider = 'mock', steps = STEPS): any {
  let step = 0
  const usage = (input: number, output: number) =>
    major.spec === 'v2'
      ? { inputTokens: input, outputTokens: output, totalTokens: input + output }
      : { inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: output, text: output, reasoning: 0 } }
  const finish = (f: 'tool-calls' | 'stop') => (major.spec === 'v2' ? f : { unified: f, raw: f })
  const next = (options: any) => {
    check(options.prompt, options.tools, seen)
    const i = step++
    const input = seen.tokens[seen.tokens.length - 1]!
    if (i < steps) {
      const call = { type: 'tool-call', toolCallId: `call-${i}`, toolName: TOOLS[i % TOOLS.length], input: JSON.stringify({ step: i }) }
      return { content: [call], finishReason: finish('tool-calls'), usage: usage(input, 20), warnings: [] }
    }
    return { content: [{ type: 'text', text: 'Audit done.' }], finishReason: finish('stop'), usage: usage(input, 5), warnings: [] }
  }
  return new major.Mock({
    provider,
    modelId: 'gpt-4o',
    doGenerate: async (options: any) => next(options),
    doStream: async (options: any) => {
      const r = next(options)
      const chunks: unknown[] = [{ type: 'stream-start', warnings: [] }]
      for (const c of r.content) {
        if (c.type === 'text') chunks.push({ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: (c as { text: string }).text }, { type: 'text-end', id: 't' })
        else chunks.push(c)
      }
      chunks.push({ type: 'finish', finishReason: r.finishReason, usage: r.usage })
      return { stream: major.ai.simulateReadableStream({ chunks }) }
    },
  })
}

/** The loop's tools: each returns its step's output (`output(step)`). */
export function tools(major: Major, z: any, output: (step: number) => string = toolOutput): Record<string, unknown> {
  return Object.fromEntries(
    TOOLS.map((name) => [
      name,
      major.ai.tool({ description: `The ${name} tool.`, inputSchema: z.object({ step: z.number() }), execute: async ({ step }: { step: number }) => output(step) }),
    ]),
  )
}
