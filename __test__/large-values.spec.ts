// Message lists carrying long texts reach JS as objects built in place (long ASCII strings as
// external strings) instead of JSON text. Both encodings must give the same values: the same
// own properties, plain prototypes, `__proto__` kept as data, numbers, nulls and non-ASCII text.
import v8 from 'node:v8'
import vm from 'node:vm'
import { describe, expect, it } from 'vitest'

import { Session, filterCompacted, importTranscript, toModelMessages } from '../native.js'
import type { Message, Part, ToolPart } from '../native.js'
import { MODEL } from './helpers.js'

// Whole repeats only: cutting would split a surrogate pair.
const long = (seed: string, n: number) => `${seed} `.repeat(Math.ceil(n / (seed.length + 1)))

/** Messages whose texts average `size` bytes, with the shapes the encoder has to get right. */
function messages(size: number): Message[] {
  const input = JSON.parse('{"command":"ls -la","__proto__":{"polluted":true},"n":[1,2.5,-3e21,null,true],"deep":{"a":{"b":""}}}')
  return [
    { id: 'u1', role: 'user', time: { created: 1 }, parts: [{ type: 'text', id: 'u1-t', text: long('plain ascii words', size) }] },
    {
      id: 'a1',
      role: 'assistant',
      parentID: 'u1',
      finish: 'tool-calls',
      time: { created: 2, completed: 3 },
      agent: 'build',
      parts: [
        { type: 'text', id: 'a1-t', text: long('naïve café 中文 emoji 🎉', size) },
        {
          type: 'tool',
          id: 'a1-c',
          callID: 'call_1',
          tool: 'bash',
          state: { status: 'completed', input, output: long('file.txt\n', size), title: 'ls', time: { start: 2, end: 3 } },
          custom: { kept: [true, false] },
        },
      ],
    } as Message,
    { id: 'u2', role: 'user', parts: [{ type: 'text', id: 'u2-t', text: '' }] },
  ]
}

const plain = (v: unknown) => JSON.parse(JSON.stringify(v))

v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc') as () => void

/** Full collections, with a turn of the event loop between them (Node runs finalizers then). */
async function collect(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    gc()
    await new Promise((r) => setImmediate(r))
  }
}

function checkPrototypes(v: unknown): void {
  if (Array.isArray(v)) return v.forEach(checkPrototypes)
  if (v !== null && typeof v === 'object') {
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype)
    Object.values(v).forEach(checkPrototypes)
  }
}

describe('large message lists', () => {
  for (const size of [10, 50_000]) {
    describe(`texts of ${size} bytes`, () => {
      const input = messages(size)

      it('context() and messages() give back what was appended', () => {
        const s = new Session({ model: MODEL })
        for (const m of input) s.append(m)
        for (const out of [s.messages(), s.context(), filterCompacted(input)]) {
          expect(out).toEqual(input)
          checkPrototypes(out)
        }
      })

      it('keeps a __proto__ key of tool input as an own data property', () => {
        const s = new Session({ model: MODEL })
        for (const m of input) s.append(m)
        const call = s.toModelMessages()[1]!
        const part = (call.content as Array<{ type: string; input?: Record<string, unknown> }>).find((p) => p.type === 'tool-call')!
        expect(Object.getPrototypeOf(part.input)).toBe(Object.prototype)
        expect(Object.prototype.hasOwnProperty.call(part.input, '__proto__')).toBe(true)
        expect((part.input as { polluted?: unknown }).polluted).toBeUndefined()
        expect(({} as { polluted?: unknown }).polluted).toBeUndefined()
      })

      it('session and stateless conversions agree in every format', () => {
        const s = new Session({ model: MODEL })
        for (const m of input) s.append(m)
        for (const format of ['ai-sdk', 'anthropic', 'openai'] as const) {
          const a = s.toModelMessages({ format })
          const b = toModelMessages(input, { format })
          expect(a).toEqual(b)
          expect(plain(a)).toEqual(a)
          checkPrototypes(a)
        }
      })
    })
  }

  it('long strings outlive the session and the call that made them', async () => {
    let s: Session | null = new Session({ model: MODEL })
    for (const m of messages(200_000)) s.append(m)
    const out = s.context()
    s = null
    // Garbage and a turn of the event loop, when Node releases what it finalized.
    for (let i = 0; i < 50; i++) JSON.parse(JSON.stringify(messages(20_000)))
    await new Promise((r) => setImmediate(r))
    expect(out).toEqual(messages(200_000))
    expect(out[0]!.parts[0]).toMatchObject({ text: long('plain ascii words', 200_000) })
  })

  it('model messages keep their texts after the session replaces them and is collected', async () => {
    // A message's long texts reach JS as the session's own bytes, shared, not copied.
    const input = messages(100_000)
    let s: Session | null = new Session({ model: MODEL })
    for (const m of input) s.append(m)
    const before = s.toModelMessages()
    const expected = plain(before)
    const seen = (v: unknown, text: string) => JSON.stringify(v).includes(JSON.stringify(text).slice(1, -1))
    expect(seen(before, long('file.txt\n', 100_000))).toBe(true)
    expect(seen(before, long('plain ascii words', 100_000))).toBe(true)
    // Every text replaced: the session drops its own references to the old ones.
    const replaced = (p: Part): Part => {
      if (p.type === 'text') return { ...p, text: long('changed', 100_000) }
      const tool = p as ToolPart
      if (tool.type === 'tool' && tool.state.status === 'completed') return { ...tool, state: { ...tool.state, output: 'short' } }
      return p
    }
    for (const m of input) s.update({ ...m, parts: m.parts.map(replaced) })
    const after = s.toModelMessages()
    expect(JSON.stringify(after)).not.toContain('file.txt')
    s = null
    await collect()
    for (let i = 0; i < 20; i++) JSON.parse(JSON.stringify(messages(50_000)))
    await collect()
    expect(plain(before)).toEqual(expected)
    expect(before).toEqual(expected)
    expect(seen(after, long('changed', 100_000))).toBe(true)
  })

  it('imports of long transcripts keep their texts', () => {
    const big = long('output line', 100_000)
    const text = [
      JSON.stringify({ role: 'user', content: 'run it' }),
      JSON.stringify({ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"cmd":"make"}' } }] }),
      JSON.stringify({ role: 'tool', tool_call_id: 'c1', content: big }),
    ].join('\n')
    const imported = importTranscript({ text })
    const tools = imported.messages.flatMap((m) => m.parts).filter((p): p is ToolPart => p.type === 'tool')
    const outputs = tools.flatMap((p) => (p.state.status === 'completed' ? [p.state.output] : []))
    expect(outputs).toEqual([big])
  })
})
