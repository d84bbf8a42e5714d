// What an integration hands the model on every call once a prune or a compaction has changed the
// conversation: `Session.handModelMessages` converts only what changed since the last call, and
// the LangChain mapping reuses the pairs of what stands. Either way the result is what a whole
// conversion gives, call after call, through appends, prunes, updates and compactions.
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages'
import { describe, expect, it } from 'vitest'

import { Session } from '../dist/index.js'
import { Engine } from '../dist/ai/conversations.js'
import { fromModelMessages, toModelMessages, type ConvertState, type HandBackState } from '../dist/langchain/messages.js'
import type { ModelMessageLike } from '../dist/native.js'
import { countingSummarizer } from './scratch.js'

const output = (i: number) => `step ${i}: ` + `line ${i} of the output\n`.repeat(200 + ((i * 37) % 300))

/** An answer calling a tool and its result, as AI SDK ModelMessages (`call` defaults to a fresh id). */
function step(i: number, call = `call-${i}`): ModelMessageLike[] {
  return [
    { role: 'assistant', content: [{ type: 'text', text: `Reading part ${i}.` }, { type: 'tool-call', toolCallId: call, toolName: 'read', input: { part: i } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: call, toolName: 'read', output: { type: 'text', value: output(i) } }] },
  ]
}

const OPTIONS = { model: { limit: { context: 1_000_000 } }, tokenizer: 'estimate', compaction: { pruneProtect: 4_000, pruneMinimum: 0, pruneProtectSteps: 2 } } as const

describe('Session.handModelMessages', () => {
  it('held messages that stand, then the new ones, are toModelMessages() after every change', () => {
    const s = Session.fromModelMessages([{ role: 'user', content: 'Read every part.' }], OPTIONS)
    let held: unknown[] = []
    const hand = (): number => {
      const { unchanged, messages } = s.handModelMessages(held.length)
      expect(unchanged).toBeLessThanOrEqual(held.length)
      held = [...held.slice(0, unchanged), ...messages]
      expect(held).toEqual(s.toModelMessages())
      return unchanged
    }
    expect(hand()).toBe(0)
    const counts: number[] = []
    for (let i = 0; i < 30; i++) {
      // A call id used twice takes the suffix a whole conversion gives it.
      s.appendModelMessages(step(i, i === 20 ? 'call-3' : undefined))
      const before = held.length
      if (i % 7 === 6) expect(s.prune().prunedPartIDs.length).toBeGreaterThan(0)
      const unchanged = hand()
      counts.push(unchanged)
      if (i % 7 !== 6) expect(unchanged).toBe(before)
      else expect(unchanged).toBeLessThan(before)
    }
    expect(counts.at(-1)).toBeGreaterThan(50)
    // Given nothing held, everything comes again.
    held = []
    expect(hand()).toBe(0)
    expect(s.handModelMessages().unchanged).toBe(0)
  })
})

/** A LangChain thread: the request, then answers with tool calls and their results. */
function thread(steps: number): BaseMessage[] {
  const out: BaseMessage[] = [new HumanMessage({ content: 'Read every part.', id: 'h0' })]
  for (let i = 0; i < steps; i++) {
    out.push(new AIMessage({ content: `Reading part ${i}, because ` + 'the next part depends on it; '.repeat(20), id: `ai-${i}`, tool_calls: [{ id: `call-${i}`, name: 'read', args: { part: i }, type: 'tool_call' }] }))
    out.push(new ToolMessage({ content: output(i), tool_call_id: `call-${i}`, name: 'read', id: `tool-${i}` }))
  }
  return out
}

describe('the LangChain mapping of a hand-back', () => {
  it('reusing the last call gives what a mapping afresh gives, through prunes and a compaction', async () => {
    const { summarizer, calls } = countingSummarizer()
    const engine = new Engine({ contextWindow: 12_000, maxOutputTokens: 2_000, tokenizer: 'estimate', summarizer, compaction: { pruneProtect: 4_000, pruneMinimum: 0, pruneProtectSteps: 2 } }, 'contextfoldLangChain', 'langchain')
    const all = thread(60)
    let convert: ConvertState | undefined
    let back: HandBackState | undefined
    let reused = 0
    let compactions = 0
    for (let n = 3; n <= all.length; n += 2) {
      const request = all.slice(0, n)
      convert = toModelMessages(request, convert)
      const prepared = await engine.call(convert.converted.messages, 'gpt-4o', { system: [] }, { id: 'thread' })
      if (prepared.compaction?.status === 'compacted') compactions++
      if (!prepared.messages) continue
      const fresh = fromModelMessages(prepared.messages, convert.converted)
      const next = fromModelMessages(prepared.messages, convert.converted, back)
      expect(next.messages).toEqual(fresh.messages)
      // The request's own messages, wherever the mapping keeps them, are the same objects.
      for (let k = 0; k < fresh.messages.length; k++) {
        if (request.includes(fresh.messages[k]!)) expect(next.messages[k]).toBe(fresh.messages[k])
      }
      if (back) reused += next.messages.filter((m) => back!.result.includes(m) && !request.includes(m)).length
      back = next.state
    }
    expect(compactions).toBeGreaterThan(0)
    expect(calls()).toBe(compactions)
    // Pruned results made in an earlier call were handed again, not made anew.
    expect(reused).toBeGreaterThan(20)
  })
})
