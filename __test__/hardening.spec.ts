// Adversarial sizes: a 200 MB tool output and a session of 1,000,000 parts are handled, within
// bounded memory, without crashing or hanging the process.
import { describe, expect, it } from 'vitest'

import { Session } from '../native.js'
import type { Message } from '../native.js'

const OPTS = { model: { limit: { context: 200_000, output: 32_000 } }, tokenizer: 'estimate' as const }

describe('adversarial sizes', () => {
  it('a 200 MB tool output is counted, truncated for the model, and pruned', () => {
    const output = 'x'.repeat(200 * 1024 * 1024)
    const s = new Session({ ...OPTS, compaction: { pruneProtect: 0, pruneMinimum: 0 } })
    s.append({ id: 'u1', role: 'user', parts: [{ type: 'text', id: 'u1t', text: 'dump it' }] })
    s.append({
      id: 'a1', role: 'assistant', finish: 'tool-calls',
      parts: [{ type: 'tool', id: 'big', callID: 'c1', tool: 'bash', state: { status: 'completed', input: { cmd: 'cat' }, output } }],
    })
    for (const id of ['u2', 'u3']) s.append({ id, role: 'user', parts: [{ type: 'text', id: `${id}t`, text: 'next' }] })
    const before = s.usage()
    expect(before.tokens).toBeGreaterThan(1_000_000)
    expect(before.tier).toBe('compact')

    const out = s.toModelMessages({ toolOutputMaxChars: 1_000 })
    const result = out.find((m) => m.role === 'tool')!
    const value = (result.content[0]!.output as { value: string }).value
    expect(value.length).toBeLessThan(1_100)
    expect(value).toContain(`omitted ${output.length - 1_000} chars`)

    const pruned = s.prune()
    expect(pruned.prunedPartIDs).toEqual(['big'])
    expect(s.usage().tokens).toBeLessThan(100)
  }, 120_000)

  it('a session of 1,000,000 parts loads, answers per-turn queries and prunes', () => {
    const messages: Message[] = []
    for (let i = 0; i < 10_000; i++) {
      const parts = Array.from({ length: 100 }, (_, k) => ({ type: 'text' as const, id: `p${i}-${k}`, text: 'ok' }))
      messages.push({ id: `m${i}`, role: i % 2 ? 'assistant' : 'user', finish: i % 2 ? 'stop' : undefined, parts })
    }
    const s = Session.fromMessages(messages, OPTS)
    expect(s.length).toBe(10_000)
    const u = s.usage()
    expect(u.source).toBe('estimate')
    expect(u.tokens).toBeGreaterThan(1_000_000)
    s.append({ id: 'last', role: 'user', parts: [{ type: 'text', id: 'lt', text: 'one more' }] })
    expect(s.usage().tokens).toBeGreaterThan(u.tokens)
    expect(s.select().tailStartID).toBeDefined()
    expect(s.prune().prunedPartIDs).toEqual([])
  }, 120_000)
})

describe('adversarial files and histories', () => {
  it('a transcript file with invalid UTF-8 imports with a warning, the bad bytes replaced', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const { importTranscript } = await import('../native.js')
    const path = join(mkdtempSync(join(tmpdir(), 'cf-utf8-')), 'bad.jsonl')
    const line = (text: string) =>
      Buffer.from(JSON.stringify({ role: 'user', content: text }) + '\n', 'utf8')
    writeFileSync(path, Buffer.concat([line('first'), Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a]), line('second')]))
    const r = importTranscript({ path }, { format: 'openai-chat' })
    expect(r.warnings.some((w) => /UTF-8/.test(w.message))).toBe(true)
    expect(r.messages.length).toBeGreaterThan(0)
  })

  it('a cycle in the parent links of a Claude Code tree stops with a warning', async () => {
    const { importTranscript } = await import('../native.js')
    const lines = [
      { type: 'user', uuid: 'a', parentUuid: 'b', sessionId: 's', message: { role: 'user', content: 'hello' } },
      { type: 'assistant', uuid: 'b', parentUuid: 'a', sessionId: 's', message: { id: 'r1', role: 'assistant', content: [{ type: 'text', text: 'hi' }] } },
    ]
    const r = importTranscript({ text: lines.map((l) => JSON.stringify(l)).join('\n') }, { format: 'claude-code' })
    expect(r.warnings.some((w) => /loop/i.test(w.message))).toBe(true)
    expect(r.messages.length).toBeLessThanOrEqual(2)
  })

  it('a completed compaction whose tailStartID names no message keeps no tail, and hides nothing after it', () => {
    const msgs: Message[] = [
      { id: 'u1', role: 'user', parts: [{ type: 'text', id: 't1', text: 'one' }] },
      { id: 'r', role: 'user', parts: [{ type: 'compaction', id: 'c', auto: true, tailStartID: 'gone' }] },
      { id: 's', role: 'assistant', summary: true, finish: 'stop', parentID: 'r', parts: [{ type: 'text', id: 't2', text: 'summary' }] },
      { id: 'u2', role: 'user', parts: [{ type: 'text', id: 't3', text: 'two' }] },
    ]
    expect(Session.fromMessages(msgs, OPTS).context().map((m) => m.id)).toEqual(['r', 's', 'u2'])
  })
})
