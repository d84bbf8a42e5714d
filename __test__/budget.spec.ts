// The context budget the model can see: the AI SDK tool (ai v5, MockLanguageModelV2) and the notices.
import { asSchema, generateText, jsonSchema } from 'ai'
import { MockLanguageModelV2 } from 'ai/test'
import { describe, expect, it } from 'vitest'

import { Session, contextBudget, contextBudgetTool } from '../dist/index.js'
import { budgetNotices } from '../dist/budget.js'
import { assistant, options, user } from './compact-fixtures.js'

describe('contextBudgetTool', () => {
  it('is a tool the AI SDK runs: no input, the budget as its result', async () => {
    const s = new Session(options())
    s.append(user('u1', 'hello '.repeat(500)))
    const tool = contextBudgetTool(s, jsonSchema)
    expect(asSchema(tool.inputSchema).jsonSchema).toEqual({ type: 'object', properties: {}, additionalProperties: false })
    const usage = { inputTokens: 10, outputTokens: 1, totalTokens: 11 }
    let call = 0
    const model = new MockLanguageModelV2({
      doGenerate: async () =>
        call++ === 0
          ? { content: [{ type: 'tool-call' as const, toolCallId: 'c1', toolName: 'context_budget', input: '{}' }], finishReason: 'tool-calls' as const, usage, warnings: [] }
          : { content: [{ type: 'text' as const, text: 'ok' }], finishReason: 'stop' as const, usage, warnings: [] },
    })
    const r = await generateText({ model, prompt: 'go', tools: { context_budget: tool }, stopWhen: () => call >= 2 })
    const result = r.steps[0]!.toolResults[0]!
    expect(result.output).toEqual(contextBudget(s))
    expect(contextBudget(s)).toMatchObject({ usable: 28_000, tier: 'ok' })
    expect(contextBudget(s).remaining).toBe(28_000 - s.usage().tokens)
  })
})

describe('budgetNotices', () => {
  it('notes each threshold once, as it is crossed', () => {
    const s = new Session(options())
    const notices = budgetNotices(s)
    expect(notices.next()).toBeUndefined()
    s.append(user('u1', 'word '.repeat(14_000)))
    const pct = s.usage().tokens / s.usage().usable
    const first = notices.next()
    expect(pct).toBeGreaterThanOrEqual(0.5)
    expect(first).toMatch(/^\[Context budget\] (50|75|90)% of your context window is used/)
    expect(notices.next()).toBeUndefined()
    s.append(assistant('a1', 'word '.repeat(8_000)))
    const second = notices.next()
    expect(second).toMatch(/(75|90)% of your context window/)
    expect(second).not.toBe(first)
  })
})
