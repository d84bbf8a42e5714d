// Bad and extreme input: none of it may crash the process, corrupt a session or lose data.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

import { Session, countTokens, countTokensAsync, estimateTokens, filterCompacted, toModelMessages } from '../native.js'
import type { Message, ToolPart } from '../native.js'
import { unknownPart } from '../dist/index.js'
import { assistant, checkToolPairs, completed, exact, expectCode, msgTokens, snapshot, text, tool, user } from './helpers.js'

const INDEX_JS = fileURLToPath(new URL('../native.js', import.meta.url))

/** The outcome of a risky call: appended, or rejected with a CF_INVALID_MESSAGE naming the message. */
function appendOrReject(s: Session, m: Message): 'appended' | 'rejected' {
  const before = snapshot(s)
  try {
    s.append(m)
  } catch (e) {
    expect(e).toBeInstanceOf(Error)
    expect((e as { code?: string }).code).toBe('CF_INVALID_MESSAGE')
    expect((e as Error).message).toContain(m.id)
    expect(snapshot(s)).toEqual(before)
    return 'rejected'
  }
  expect(s.length).toBe(before.length + 1)
  return 'appended'
}

describe('strings', () => {
  it('lone UTF-16 surrogates in text are handled: no crash, well-formed output, the rest kept', () => {
    const lone = 'before \uD800 middle \uDC00 after \uDBFF'
    const s = new Session(exact())
    s.append(user('u1', lone))
    s.append(assistant('a1', [tool('c1', 'bash', completed(lone, { arg: lone }))]))
    const back = (s.get('u1')!.parts[0] as { text: string }).text
    expect(back.isWellFormed()).toBe(true)
    expect(back.length).toBe(lone.length)
    expect(back.replace(/\uFFFD/g, '?')).toBe('before ? middle ? after ?')
    const out = s.toModelMessages()
    expect(JSON.stringify(out).isWellFormed()).toBe(true)
    expect(checkToolPairs(out)).toBe(1)
    expect(countTokens(lone, 'o200k')).toBe(countTokens(lone.replace(/[\uD800-\uDFFF]/g, '\uFFFD'), 'o200k'))
    expect(estimateTokens(lone)).toBeGreaterThan(0)
    expect(s.usage().tokens).toBeGreaterThan(0)
  })

  it('a well-formed surrogate pair (emoji) is kept exactly', () => {
    const s = new Session(exact())
    s.append(user('u1', 'ship it 🚀👩‍💻'))
    expect((s.get('u1')!.parts[0] as { text: string }).text).toBe('ship it 🚀👩‍💻')
  })

  it('NUL bytes round-trip exactly and are counted', () => {
    const nul = 'a\u0000b\u0000\u0000c'
    const s = new Session(exact())
    s.append(user('u\u0000id', nul))
    expect(s.get('u\u0000id')).toBeDefined()
    expect((s.messages()[0].parts[0] as { text: string }).text).toBe(nul)
    expect(countTokens(nul, 'o200k')).toBeGreaterThan(0)
    expect(s.usage().tokens).toBe(msgTokens(user('x', [])) + countTokens(nul, 'o200k'))
    expect(toModelMessages(s.messages())).toEqual([{ role: 'user', content: [{ type: 'text', text: nul }] }])
  })

  describe('50 MB', () => {
    const chunk = 'const x = compute(42); // the quick brown fox\n'
    const N = Math.ceil(50_000_000 / chunk.length)
    const big = chunk.repeat(N)

    it('countTokens is exact on 50 MB (a repeated line counts N times the line)', () => {
      expect(big.length).toBeGreaterThanOrEqual(50_000_000)
      expect(countTokens(big, 'o200k')).toBe(N * countTokens(chunk, 'o200k'))
      expect(countTokens(big, 'cl100k')).toBe(N * countTokens(chunk, 'cl100k'))
    })

    it('countTokensAsync agrees on 50 MB', async () => {
      expect(await countTokensAsync(big, 'o200k')).toBe(N * countTokens(chunk, 'o200k'))
    })

    it('estimateTokens works on 50 MB and scales with it', () => {
      const one = estimateTokens(chunk)
      const all = estimateTokens(big)
      // the estimate is a per-character-class sum rounded up once
      expect(all).toBeLessThanOrEqual(N * one)
      expect(all).toBeGreaterThan(N * (one - 1))
    })

    it('one 50 MB word without spaces is counted without trouble', async () => {
      const word = 'a'.repeat(50_000_000)
      const n = countTokens(word, 'o200k')
      expect(n).toBeGreaterThan(0)
      expect(n).toBeLessThan(50_000_000)
      expect(await countTokensAsync(word, 'o200k')).toBe(n)
      expect(estimateTokens(word)).toBeGreaterThan(0)
    })

    it('a 50 MB text part is appended, counted exactly and converted', () => {
      const s = new Session(exact())
      s.append(user('u1', 'small'))
      s.append(user('big', big))
      expect(s.length).toBe(2)
      expect(s.usage().tokens).toBe(msgTokens(user('u1', 'small')) + msgTokens(user('x', [])) + N * countTokens(chunk, 'o200k'))
      const back = (s.get('big')!.parts[0] as { text: string }).text
      expect(back.length).toBe(big.length)
      expect(back === big).toBe(true)
      const out = s.toModelMessages()
      expect(((out[1] as { content: Array<{ text: string }> }).content[0].text).length).toBe(big.length)
      expect(s.isOverflow()).toBe(true)
    })

    it('a 50 MB tool output is cut by toolOutputMaxChars', () => {
      const s = new Session(exact({ toolOutputMaxChars: 1_000 }))
      s.append(user('u1'))
      s.append(assistant('a1', [tool('c1', 'bash', completed(big))]))
      const r = s.toModelMessages().find((m) => m.role === 'tool')!.content[0]
      expect(r.output.type).toBe('text')
      expect((r.output.value as string).length).toBeLessThan(1_100)
      expect(r.output.value).toContain(`omitted ${big.length - 1_000} chars`)
    })
  })
})

describe('structure', () => {
  it('duplicate ids are rejected, never merged', () => {
    const s = new Session(exact())
    s.append(user('same', 'first'))
    const before = snapshot(s)
    expectCode(() => s.append(assistant('same', 'second')), 'CF_DUPLICATE_ID')
    expect(snapshot(s)).toEqual(before)
    expectCode(() => Session.fromMessages([user('a'), user('b'), assistant('a')], exact()), 'CF_DUPLICATE_ID')
  })

  it('duplicate part ids inside a message do not break anything', () => {
    const s = new Session(exact())
    s.append(user('u1', [text('one', 'same'), text('two', 'same')]))
    expect(s.toModelMessages()).toEqual([{ role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] }])
  })

  it('unknown part types are kept in messages(), and ignored by toModelMessages and counting', () => {
    const unknown = [
      unknownPart({ type: 'step-start', id: 'ss', snapshot: 'abc123' }),
      unknownPart({ type: 'patch', id: 'pa', hash: 'h', files: ['a.ts', 'b.ts'], nested: { deep: [1, 2, { x: null }] } }),
      unknownPart({ type: 'subtask', id: 'st', prompt: 'a'.repeat(10_000), agent: 'general' }),
    ]
    const withUnknown = assistant('a1', [unknown[0], text('visible'), unknown[1], unknown[2]])
    const without = assistant('a1', [withUnknown.parts[1]])
    const s = new Session(exact())
    s.append(user('u1'))
    s.append(withUnknown)
    expect(s.get('a1')).toEqual(withUnknown)
    expect(s.toModelMessages()).toEqual(toModelMessages([user('u1', s.messages()[0].parts), without]))
    expect(msgTokens(withUnknown)).toBe(msgTokens(without))
  })

  it('unknownPart gives the part itself, and refuses a known part type or a part without a string type and id', () => {
    const part = { type: 'step-start', id: 'ss', snapshot: 'abc' }
    expect(unknownPart(part)).toBe(part)
    expectCode(() => unknownPart({ type: 'text', id: 'p', text: 'hi' }), 'CF_INVALID_ARGUMENT')
    expectCode(() => unknownPart({ type: 7, id: 'p' } as never), 'CF_INVALID_ARGUMENT')
    expectCode(() => unknownPart(null as never), 'CF_INVALID_ARGUMENT')
  })

  it('a message with 100,000 parts works', () => {
    const parts = Array.from({ length: 100_000 }, (_, i) => text('x', `p${i}`))
    const s = new Session(exact())
    s.append(user('u1', parts))
    expect(s.get('u1')!.parts).toHaveLength(100_000)
    expect(s.usage().tokens).toBe(msgTokens(user('x', [])) + 100_000 * countTokens('x', 'o200k'))
  })

  it('tool input nested 1,000 levels deep is kept or rejected as an invalid message (no crash)', () => {
    let input: Record<string, unknown> = { leaf: true }
    for (let i = 0; i < 1_000; i++) input = { a: input }
    const m = assistant('deep', [tool('c1', 'bash', completed('ok', input))])
    const s = new Session(exact())
    s.append(user('u1'))
    if (appendOrReject(s, m) === 'appended') {
      expect(s.get('deep')).toEqual(m)
      const call = s.toModelMessages()[1] as { content: Array<{ input: unknown }> }
      expect(call.content[0].input).toEqual(input)
    }
    // the session still works either way
    s.append(user('u2'))
    expect(s.length).toBeGreaterThanOrEqual(2)
  })

  it('tool input nested 100,000 levels deep does not crash the process', () => {
    // Run in a child process: a native stack overflow would kill it, not the test runner.
    const script = `
      const { Session, toModelMessages } = require(${JSON.stringify(INDEX_JS)})
      let input = {}
      for (let i = 0; i < 100000; i++) input = { a: input }
      const m = { id: 'deep', role: 'assistant', parts: [{ type: 'tool', id: 't', callID: 'c', tool: 'bash', state: { status: 'completed', input, output: 'ok' } }] }
      const s = new Session({ model: { limit: { context: 1000 } } })
      let outcome
      try { s.append(m); outcome = 'appended' } catch (e) { outcome = 'error:' + e.code }
      try { toModelMessages([m]); } catch (e) { outcome += ',error:' + e.code }
      console.log(outcome)
    `
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
    expect(r.signal).toBeNull()
    expect(r.status, r.stderr).toBe(0)
    // how it is reported is checked at 1,000 levels above; here only survival matters
    expect(r.stdout.trim()).toMatch(/^(appended|error:\w+)(,error:\w+)?$/)
  })

  it('a cyclic message is rejected as an invalid message (no crash, no hang)', () => {
    const m = user('cyclic') as Message & { self?: unknown }
    m.self = m
    const s = new Session(exact())
    expect(appendOrReject(s, m)).toBe('rejected')
  })

  it('a NaN in a field contextfold does not know is kept or rejected as an invalid message', () => {
    const s = new Session(exact())
    appendOrReject(s, assistant('a1', 'x', { cost: Number.NaN }))
    appendOrReject(s, user('u1', 'x', { time: { created: Number.NaN } }))
  })

  it('holes in arrays (undefined) are kept or rejected as an invalid message', () => {
    const s = new Session(exact())
    // eslint-disable-next-line no-sparse-arrays
    appendOrReject(s, assistant('a1', [tool('c1', 'bash', completed('ok', { list: [1, , 3], maybe: [undefined] }))]))
  })

  it('a "__proto__" key parsed from JSON (e.g. a tool input from the model) is kept as data', () => {
    const input = JSON.parse('{"__proto__": {"injected": 1}, "path": "a.ts"}')
    const m = assistant('a1', [tool('c1', 'write', completed('ok', input))])
    const s = new Session(exact())
    s.append(m)
    const back = (s.get('a1')!.parts[0] as ToolPart).state.input as Record<string, unknown>
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype)
    expect(Object.keys(back).sort()).toEqual(['__proto__', 'path'])
    const call = (s.toModelMessages()[0] as { content: Array<{ input: unknown }> }).content[0]
    expect(JSON.stringify(call.input)).toBe(JSON.stringify(input))
    // and a round trip through messages() does not turn the prototype into own data
    const again = toModelMessages(filterCompacted(s.messages()))[0] as { content: Array<{ input: unknown }> }
    expect(JSON.stringify(again.content[0].input)).toBe(JSON.stringify(input))
  })

  it('a very long id works', () => {
    const id = 'm'.repeat(1_000_000)
    const s = new Session(exact())
    s.append(user(id, 'hi'))
    expect(s.get(id)?.id).toBe(id)
    expectCode(() => s.append(user(id, 'again')), 'CF_DUPLICATE_ID')
  })
})
