// Real transcripts (../shared/corpus): token counts are exact on real text, and a real Codex
// rollout goes through a Session and back out as valid model messages.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { countTokens as gptO200k } from 'gpt-tokenizer/encoding/o200k_base'
import { getEncoding } from 'js-tiktoken'
import { describe, expect, it } from 'vitest'

import { Session, countTokens, countTokensAsync, estimateTokens, prune } from '../native.js'
import type { Message, Part } from '../native.js'
import { checkToolPairs, exact, INTERRUPTED, msgTokens } from './helpers.js'

const CORPUS = fileURLToPath(new URL('../../shared/corpus/', import.meta.url))
const read = (rel: string) => readFileSync(CORPUS + rel, 'utf8')
const noSpecial = { disallowedSpecial: new Set<string>() }
const cl100k = getEncoding('cl100k_base')

/** Every `step`-th non-empty line, cut to at most `max` code points (never inside a surrogate pair). */
function sampleLines(text: string, count: number, max = 30_000): string[] {
  const lines = text.split('\n').filter((l) => l.length > 0)
  const step = Math.max(1, Math.floor(lines.length / count))
  const out: string[] = []
  for (let i = 0; i < lines.length && out.length < count; i += step) {
    const cps = Array.from(lines[i])
    out.push(cps.length > max ? cps.slice(0, max).join('') : lines[i])
  }
  return out
}

const FILES = [
  'claude-code/kimicli-516b7270-chinese.jsonl',
  'claude-code/kimicli-9205db7e-chinese-plan.jsonl',
  'codex/agentv-019ed836-small.jsonl',
  'codex/agentv-019f1d64-nocompaction.jsonl',
  'pi/pi-mono-large-session-v1.jsonl',
  'openai-chat/swesmith-ft-xml-3convs.jsonl',
  'mini-swe-agent/sqlfluff-2419-deepseek-toolcalls.traj.json',
  'swe-agent/marshmallow-1867-function-calling.traj',
  'claude-code/kimicli-7758c4c5-images-3mb.jsonl',
]

describe('countTokens is exact on real transcripts', () => {
  it.each(FILES)('o200k on sampled lines of %s equals gpt-tokenizer', (file) => {
    const lines = sampleLines(read(file), 40)
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) {
      expect(countTokens(line, 'o200k')).toBe(gptO200k(line, noSpecial))
    }
  })

  it.each(FILES.slice(0, 4))('cl100k on sampled lines of %s equals js-tiktoken', (file) => {
    for (const line of sampleLines(read(file), 15, 5_000)) {
      expect(countTokens(line, 'cl100k')).toBe(cl100k.encode(line, [], []).length)
    }
  })

  it('o200k on whole files (Chinese, Codex) equals gpt-tokenizer, sync and async', async () => {
    for (const file of ['claude-code/kimicli-516b7270-chinese.jsonl', 'codex/agentv-019ed836-small.jsonl']) {
      const text = read(file)
      const expected = gptO200k(text, noSpecial)
      expect(countTokens(text, 'o200k')).toBe(expected)
      expect(await countTokensAsync(text, 'o200k')).toBe(expected)
    }
  })

  it('the estimate is within 35% of o200k on each whole file, and closer than chars/4 on Chinese', () => {
    for (const file of FILES.slice(0, 6)) {
      const text = read(file)
      const exactCount = countTokens(text, 'o200k')
      const est = estimateTokens(text)
      expect(Math.abs(est - exactCount) / exactCount, `${file}: ${est} vs ${exactCount}`).toBeLessThan(0.35)
    }
    const zh = read('claude-code/kimicli-516b7270-chinese.jsonl')
      .split('\n')
      .map((l) => l.replace(/[\x00-\x7f]/g, ''))
      .join('')
    const exactZh = countTokens(zh, 'o200k')
    expect(Math.abs(estimateTokens(zh) - exactZh)).toBeLessThan(Math.abs(Math.ceil(zh.length / 4) - exactZh))
  })

  it('a session of real lines counts each exactly', async () => {
    const lines = sampleLines(read('claude-code/kimicli-516b7270-chinese.jsonl'), 60)
    const msgs: Message[] = lines.map((l, i) => ({ id: `m${i}`, role: i % 2 ? 'assistant' : 'user', parts: [{ type: 'text', id: `p${i}`, text: l }] }))
    const overhead = msgTokens({ id: 'x', role: 'user', parts: [] })
    const expected = lines.reduce((n, l) => n + overhead + gptO200k(l, noSpecial), 0)
    expect(Session.fromMessages(msgs, exact()).usage().tokens).toBe(expected)
    expect((await Session.fromMessagesAsync(msgs, exact())).usage().tokens).toBe(expected)
  })
})

/** A minimal Codex rollout → canonical messages conversion (tool calls and outputs joined by call_id). */
function fromCodex(text: string): { messages: Message[]; calls: number; answered: number; outputs: Map<string, string> } {
  const messages: Message[] = []
  const parts = new Map<string, Part & { state: Record<string, unknown> }>()
  const outputs = new Map<string, string>()
  let calls = 0
  let n = 0
  const current = (): Message => {
    const last = messages[messages.length - 1]
    if (last && last.role === 'assistant') return last
    const m: Message = { id: `msg${n++}`, role: 'assistant', parts: [] }
    messages.push(m)
    return m
  }
  for (const line of text.split('\n')) {
    if (!line.trim()) continue
    const rec = JSON.parse(line)
    if (rec.type !== 'response_item') continue
    const p = rec.payload
    if (p.type === 'message') {
      const body = (p.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n')
      if (p.role === 'assistant') current().parts.push({ type: 'text', id: `part${n++}`, text: body })
      else messages.push({ id: `msg${n++}`, role: p.role === 'developer' ? 'system' : 'user', parts: [{ type: 'text', id: `part${n++}`, text: body }] })
    } else if (p.type === 'function_call' || p.type === 'custom_tool_call') {
      calls++
      let input: unknown = p.input ?? p.arguments
      try {
        input = JSON.parse(p.arguments)
      } catch {
        input = { raw: input }
      }
      const part = { type: 'tool', id: `part${n++}`, callID: p.call_id, tool: p.name, state: { status: 'running', input } } as Part & {
        state: Record<string, unknown>
      }
      parts.set(p.call_id, part)
      current().parts.push(part)
    } else if (p.type === 'function_call_output' || p.type === 'custom_tool_call_output') {
      const part = parts.get(p.call_id)
      const output = typeof p.output === 'string' ? p.output : JSON.stringify(p.output)
      outputs.set(p.call_id, output)
      if (part) part.state = { status: 'completed', input: part.state.input, output }
    }
  }
  return { messages, calls, answered: outputs.size, outputs }
}

describe('a real Codex rollout through a Session', () => {
  // [file, whether it has tool output older than its last two user turns]
  for (const [file, prunable] of [
    ['codex/agentv-019ed836-small.jsonl', false],
    ['codex/agentv-019f1d64-nocompaction.jsonl', true],
  ] as const) {
    it(`${file}: every call paired, outputs verbatim, unanswered calls interrupted`, () => {
      const { messages, calls, answered, outputs } = fromCodex(read(file))
      expect(calls).toBeGreaterThan(5)
      const s = Session.fromMessages(messages, exact())
      expect(s.length).toBe(messages.length)
      const out = s.toModelMessages()
      expect(checkToolPairs(out)).toBe(calls)
      const results = out.filter((m) => m.role === 'tool').flatMap((m) => m.content)
      let interrupted = 0
      for (const r of results) {
        if (outputs.has(r.toolCallId)) expect(r.output).toEqual({ type: 'text', value: outputs.get(r.toolCallId) })
        else {
          expect(r.output).toEqual({ type: 'error-text', value: INTERRUPTED })
          interrupted++
        }
      }
      expect(interrupted).toBe(calls - answered)
      // exact local counts on real content
      expect(s.usage().tokens).toBe(messages.reduce((k, m) => k + msgTokens(m), 0))
      // prune (stateless and in the session) agree, and a second prune does nothing
      const expected = prune(messages, { pruneProtect: 500, pruneMinimum: 100 }, 'o200k')
      const p = Session.fromMessages(messages, exact({ pruneProtect: 500, pruneMinimum: 100 }))
      expect(expected.prunedPartIDs.length > 0).toBe(prunable)
      expect(p.prune().prunedPartIDs).toEqual(expected.prunedPartIDs)
      expect(p.prune().prunedPartIDs).toEqual([])
      checkToolPairs(p.toModelMessages())
    })
  }
})
