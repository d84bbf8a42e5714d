// The native Session: construction, append / update / get / messages / length, usage() sources,
// and agreement between the Session methods and the stateless functions.
import { describe, expect, it } from 'vitest'

import {
  Session,
  countTokens,
  estimateTokens,
  filterCompacted,
  select as selectFn,
  toModelMessages as toModelMessagesFn,
  turns as turnsFn,
} from '../native.js'
import type { Message, Part } from '../native.js'
import { unknownPart } from '../dist/index.js'
import {
  MODEL,
  answered,
  assistant,
  completed,
  exact,
  expectCode,
  expectRejectCode,
  file,
  ids,
  msgTokens,
  request,
  snapshot,
  sumTokens,
  summary,
  text,
  tool,
  user,
  words,
} from './helpers.js'

const CJK = '上下文压缩是编码代理的核心能力，需要保留关键信息和文件路径。'.repeat(8)

function history(): Message[] {
  return [
    user('u1', 'read the file please'),
    assistant('a1', [text('reading'), tool('c1', 'read', completed(words(40), { path: 'a.ts' }))], { finish: 'tool-calls' }),
    user('u2', 'now fix it'),
    assistant('a2', 'done', { finish: 'stop' }),
  ]
}

describe('the package', () => {
  it('loads the native binding and exports the documented API', async () => {
    const api = await import('../native.js')
    expect(api.__napiBindingTarget).toBe('native')
    for (const name of [
      'countTokens',
      'countTokensAsync',
      'estimateTokens',
      'filterCompacted',
      'isOverflow',
      'prune',
      'select',
      'splitTurn',
      'toModelMessages',
      'turns',
      'usable',
    ] as const) {
      expect(typeof api[name], name).toBe('function')
    }
    expect(typeof api.Session.fromMessages).toBe('function')
    expect(typeof api.Session.fromMessagesAsync).toBe('function')
  })
})

describe('Session construction', () => {
  it('starts empty', () => {
    const s = new Session(exact())
    expect(s.length).toBe(0)
    expect(s.messages()).toEqual([])
    expect(s.context()).toEqual([])
    expect(s.turns()).toEqual([])
    expect(s.toModelMessages()).toEqual([])
    expect(s.get('x') ?? undefined).toBeUndefined()
    const u = s.usage()
    expect(u.tokens).toBe(0)
    expect(u.source).toBe('estimate')
    expect(u.tier).toBe('ok')
    expect(u.usable).toBe(168_000)
  })

  it('rejects bad options with CF_INVALID_ARGUMENT naming the field', () => {
    expect(expectCode(() => new Session({} as never), 'CF_INVALID_ARGUMENT').message).toContain('model')
    expect(
      expectCode(() => new Session({ model: { limit: { context: -5 } } }), 'CF_INVALID_ARGUMENT').message,
    ).toContain('context')
    expect(
      expectCode(() => new Session({ model: MODEL, tokenizer: 'gpt2' as never }), 'CF_INVALID_ARGUMENT').message,
    ).toContain('gpt2')
    expect(
      expectCode(() => new Session({ model: MODEL, compaction: { pruneProtect: -1 } }), 'CF_INVALID_ARGUMENT').message,
    ).toContain('pruneProtect')
    expect(
      expectCode(() => new Session({ model: MODEL, compaction: { tailTurns: 'two' as never } }), 'CF_INVALID_ARGUMENT')
        .message,
    ).toContain('tailTurns')
  })

  it('rejects NaN and infinite options with CF_INVALID_ARGUMENT, naming the field (not taken for the default)', () => {
    expect(expectCode(() => new Session({ model: MODEL, compaction: { pruneMinimum: Number.NaN } }), 'CF_INVALID_ARGUMENT').message).toBe(
      'options.compaction.pruneMinimum: must be a finite number, got NaN',
    )
    expect(expectCode(() => new Session({ model: MODEL, compaction: { reserved: Infinity } }), 'CF_INVALID_ARGUMENT').message).toContain('compaction.reserved')
    // NaN in a message is JSON's null, as JSON.stringify writes it.
    const s = new Session({ model: MODEL })
    s.append({ id: 'u', role: 'user', parts: [{ type: 'text', id: 'u-t', text: 'hi' }], meta: Number.NaN } as never)
    expect(s.messages()).toHaveLength(1)
  })

  it('prune thresholds scale with a window under 200k unless given; options shows those in effect', () => {
    const small = new Session({ model: { limit: { context: 32_000, output: 4_000 } } }).options.compaction!
    expect([small.pruneProtect, small.pruneMinimum, small.pruneProtectSteps]).toEqual([6_400, 3_200, 2])
    const large = new Session({ model: { limit: { context: 400_000, output: 4_000 } } }).options.compaction!
    expect([large.pruneProtect, large.pruneMinimum, large.pruneProtectSteps]).toEqual([40_000, 20_000, 10])
    const given = new Session({ model: { limit: { context: 32_000, output: 4_000 } }, compaction: { pruneProtect: 20_000, pruneMinimum: 0 } }).options.compaction!
    expect([given.pruneProtect, given.pruneMinimum, given.pruneProtectSteps]).toEqual([20_000, 0, 2])
  })

  it('fromMessages holds the same messages as appending them one by one', () => {
    const msgs = history()
    const a = Session.fromMessages(msgs, exact())
    const b = new Session(exact())
    for (const m of msgs) b.append(m)
    expect(a.messages()).toEqual(msgs)
    expect(a.length).toBe(4)
    expect(a.messages()).toEqual(b.messages())
    expect(a.usage()).toEqual(b.usage())
    expect(a.toModelMessages()).toEqual(b.toModelMessages())
  })

  it('fromMessages reports the index and id of a bad message', () => {
    const msgs = [...history(), { id: 'bad', role: 'user', parts: [{ type: 'text', id: 'p' }] } as unknown as Message]
    const e = expectCode(() => Session.fromMessages(msgs, exact()), 'CF_INVALID_MESSAGE')
    expect(e.message).toContain('messages[4]')
    expect(e.message).toContain('bad')
    expect(e.message).toContain('parts[0]')
  })

  it('fromMessages rejects duplicate ids with CF_DUPLICATE_ID', () => {
    const msgs = [...history(), user('u1', 'again')]
    const e = expectCode(() => Session.fromMessages(msgs, exact()), 'CF_DUPLICATE_ID')
    expect(e.message).toContain('u1')
  })

  it('fromMessagesAsync resolves to an equivalent Session', async () => {
    const msgs = history()
    const s = await Session.fromMessagesAsync(msgs, exact())
    expect(s).toBeInstanceOf(Session)
    expect(s.messages()).toEqual(msgs)
    expect(s.usage()).toEqual(Session.fromMessages(msgs, exact()).usage())
  })

  it('fromMessagesAsync rejects bad input with the same codes', async () => {
    await expectRejectCode(Session.fromMessagesAsync([...history(), user('u2')], exact()), 'CF_DUPLICATE_ID')
    await expectRejectCode(Session.fromMessagesAsync([{ role: 'user', parts: [] } as never], exact()), 'CF_INVALID_MESSAGE')
    await expectRejectCode(Session.fromMessagesAsync([], {} as never), 'CF_INVALID_ARGUMENT')
  })

  it('fromMessagesAsync with an already aborted signal rejects with AbortError / CF_ABORTED', async () => {
    const e = await expectRejectCode(Session.fromMessagesAsync(history(), exact(), AbortSignal.abort()), 'CF_ABORTED')
    expect(e.name).toBe('AbortError')
  })

  it('fromMessagesAsync aborted mid-way through 40 MB of text rejects with AbortError / CF_ABORTED', async () => {
    const chunk = 'The quick brown fox jumps over the lazy dog 12345.\n'.repeat(200) // ~10 KB
    const msgs: Message[] = []
    for (let i = 0; i < 4_000; i++) msgs.push(i % 2 ? assistant(`m${i}`, chunk) : user(`m${i}`, chunk))
    const ac = new AbortController()
    const p = Session.fromMessagesAsync(msgs, exact(), ac.signal)
    setTimeout(() => ac.abort(), 1)
    const e = await expectRejectCode(p, 'CF_ABORTED')
    expect(e.name).toBe('AbortError')
  })
})

describe('append, get, messages, length', () => {
  it('keeps messages in arrival order, unknown fields and unknown parts included', () => {
    const s = new Session(exact())
    const m1 = user('u1', 'hi', { sessionID: 'ses_1', agent: 'build', time: { created: 1 } })
    const m2 = assistant('a1', [
      unknownPart({ type: 'step-start', id: 'ss1', snapshot: 'abc' }),
      { ...text('hello'), metadata: { openai: { itemId: 'x' } } } as Part,
      unknownPart({ type: 'patch', id: 'pt1', files: ['a.ts'], hash: 'h' }),
    ], { finish: 'stop', model: { providerID: 'openai', modelID: 'gpt-5' }, cost: 0.12 })
    s.append(m1)
    s.append(m2)
    expect(s.length).toBe(2)
    expect(s.messages()).toEqual([m1, m2])
    expect(s.get('a1')).toEqual(m2)
    expect(s.get('u1')).toEqual(m1)
    expect(s.get('nope') ?? undefined).toBeUndefined()
  })

  it('get() of an unknown id returns undefined, as typed (`Message | undefined`)', () => {
    const s = new Session(exact())
    expect(s.get('nope')).toBeUndefined()
    s.append(user('u1'))
    expect(s.get('nope')).toBeUndefined()
  })

  it('returns copies: mutating what it returned does not change the session', () => {
    const s = new Session(exact())
    s.append(user('u1', 'original'))
    const got = s.get('u1')!
    ;(got.parts[0] as { text: string }).text = 'changed'
    s.messages()[0].id = 'zzz'
    expect((s.get('u1')!.parts[0] as { text: string }).text).toBe('original')
    expect(s.messages()[0].id).toBe('u1')
  })

  it('counts exactly: a text part adds countTokens(text) to its message', () => {
    const empty = msgTokens(user('u', []))
    for (const t of ['hello world', CJK, 'fn main() { println!("{}", 1 + 2); }']) {
      expect(msgTokens(user('u', t))).toBe(empty + countTokens(t, 'o200k'))
    }
    // two parts add up
    expect(msgTokens(user('u', [text('hello world'), text(CJK)]))).toBe(
      empty + countTokens('hello world', 'o200k') + countTokens(CJK, 'o200k'),
    )
  })

  it('with the estimate tokenizer, a text part adds estimateTokens(text)', () => {
    const empty = msgTokens(user('u', []), 'estimate')
    for (const t of ['hello world', CJK, 'fn main() { println!("{}", 1 + 2); }']) {
      expect(msgTokens(user('u', t), 'estimate')).toBe(empty + estimateTokens(t))
    }
  })

  it('an image or PDF costs imageTokens (default 1200), never its base64 length', () => {
    const base64 = 'A'.repeat(300_000)
    const empty = msgTokens(user('u', []))
    const image = user('u', [file('image/png', `data:image/png;base64,${base64}`, 'big.png')])
    const pdf = user('u', [file('application/pdf', `data:application/pdf;base64,${base64}`, 'doc.pdf')])
    expect(msgTokens(image)).toBe(empty + 1_200)
    expect(msgTokens(pdf)).toBe(empty + 1_200)
    expect(msgTokens(image, 'estimate')).toBe(msgTokens(user('u', []), 'estimate') + 1_200)
    const cheap = new Session(exact({ imageTokens: 500 }))
    cheap.append(image)
    expect(cheap.usage().tokens).toBe(empty + 500)
    // a tool's image attachment too
    const shot = assistant('a', [
      tool('c', 'screenshot', completed('', {}, { attachments: [{ id: 'at', mime: 'image/png', url: `data:image/png;base64,${base64}` }] })),
    ])
    const noShot = assistant('a', [tool('c', 'screenshot', completed('', {}))])
    expect(msgTokens(shot)).toBe(msgTokens(noShot) + 1_200)
  })

  it('a session counts the sum of its messages', () => {
    const msgs = history()
    const s = Session.fromMessages(msgs, exact())
    expect(s.usage().tokens).toBe(sumTokens(msgs))
    expect(s.usage().localTokens).toBe(sumTokens(msgs))
    expect(s.usage().calibration).toBe(1)
  })

  it('picks o200k for OpenAI models, cl100k for gpt-4, and the estimate otherwise', () => {
    const msg = user('u', CJK)
    const tokensWith = (opts: ConstructorParameters<typeof Session>[0]) => Session.fromMessages([msg], opts).usage().tokens
    const o200k = tokensWith({ model: MODEL, tokenizer: 'o200k' })
    const cl100k = tokensWith({ model: MODEL, tokenizer: 'cl100k' })
    const est = tokensWith({ model: MODEL, tokenizer: 'estimate' })
    expect(new Set([o200k, cl100k, est]).size).toBe(3)
    expect(tokensWith({ model: { providerID: 'openai', modelID: 'gpt-5', limit: MODEL.limit } })).toBe(o200k)
    expect(tokensWith({ model: { providerID: 'openai', modelID: 'gpt-4', limit: MODEL.limit } })).toBe(cl100k)
    expect(tokensWith({ model: { providerID: 'anthropic', modelID: 'claude-sonnet-4', limit: MODEL.limit } })).toBe(est)
    // an explicit tokenizer wins over the model
    expect(tokensWith({ model: { providerID: 'anthropic', modelID: 'claude-sonnet-4', limit: MODEL.limit }, tokenizer: 'o200k' })).toBe(o200k)
  })

  it('a rejected append (invalid message) leaves the session exactly as it was', () => {
    const s = Session.fromMessages(history(), exact())
    s.append(answered('a3', { input: 5_000, output: 10 }))
    const before = snapshot(s)
    const bad: unknown[] = [
      { role: 'user', parts: [] },
      { id: 'x', role: 'robot', parts: [] },
      { id: 'x', role: 'user', parts: [{ type: 'text', text: 'no id' }] },
      { id: 'x', role: 'assistant', finish: 'stop', parts: [], tokens: { input: -1, output: 0 } },
      { id: 'x', role: 'user', parts: [{ type: 'file', id: 'f', mime: 'image/png' }] },
      { id: 'x', role: 'user', parts: [{ type: 'text', id: 'p', text: 'fine' }, { type: 'tool', id: 't' }] },
    ]
    for (const m of bad) {
      expectCode(() => s.append(m as Message), 'CF_INVALID_MESSAGE')
      expect(snapshot(s)).toEqual(before)
    }
  })

  it('a rejected append (duplicate id) leaves the session exactly as it was', () => {
    const s = Session.fromMessages(history(), exact())
    s.append(answered('a3', { input: 5_000, output: 10 }))
    const before = snapshot(s)
    // a duplicate that would otherwise change everything: a completed summary with usage
    const e = expectCode(() => s.append({ ...summary('a2', 'u2'), tokens: { input: 1, output: 1 } }), 'CF_DUPLICATE_ID')
    expect(e.message).toContain('a2')
    expect(snapshot(s)).toEqual(before)
    expectCode(() => s.append(user('u1', words(10_000))), 'CF_DUPLICATE_ID')
    expect(snapshot(s)).toEqual(before)
  })
})

describe('update', () => {
  it('replaces the message with the same id, in place', () => {
    const s = Session.fromMessages(history(), exact())
    const before = s.usage().tokens
    const newA1 = assistant('a1', [text('reading twice'), tool('c1', 'read', completed(words(90), { path: 'a.ts' }))], {
      finish: 'tool-calls',
    })
    s.update(newA1)
    expect(s.length).toBe(4)
    expect(ids(s.messages())).toEqual(['u1', 'a1', 'u2', 'a2'])
    expect(s.get('a1')).toEqual(newA1)
    expect(s.usage().tokens).toBe(before - msgTokens(history()[1]) + msgTokens(newA1))
    expect(s.usage().tokens).toBe(Session.fromMessages(s.messages(), exact()).usage().tokens)
  })

  it('streaming: an answer without usage, then finished with usage', () => {
    const s = new Session(exact())
    s.append(user('u1', 'hi'))
    s.append(assistant('a1', 'partial'))
    expect(s.usage().source).toBe('estimate')
    s.update(answered('a1', { input: 2_000, output: 40 }, 'partial and more'))
    expect(s.usage()).toMatchObject({ source: 'usage', tokens: 2_040, usageTokens: 2_040, localTokens: 0 })
  })

  it('rejects an unknown id with CF_NOT_FOUND and changes nothing', () => {
    const s = Session.fromMessages(history(), exact())
    const before = snapshot(s)
    const e = expectCode(() => s.update(user('nope', 'x')), 'CF_NOT_FOUND')
    expect(e.message).toContain('nope')
    expect(snapshot(s)).toEqual(before)
  })

  it('rejects an invalid replacement with CF_INVALID_MESSAGE and changes nothing', () => {
    const s = Session.fromMessages(history(), exact())
    const before = snapshot(s)
    const e = expectCode(() => s.update({ id: 'a1', role: 'assistant', parts: [{ type: 'reasoning', id: 'r' }] } as never), 'CF_INVALID_MESSAGE')
    expect(e.message).toContain('a1')
    expect(snapshot(s)).toEqual(before)
  })

  it('an update can turn a message into a completed summary (and back), changing the context', () => {
    const s = Session.fromMessages([...history(), request('c1'), summary('s1', 'c1', { finish: null })], exact())
    expect(ids(s.context())).toEqual(['u1', 'a1', 'u2', 'a2', 'c1', 's1'])
    s.update(summary('s1', 'c1'))
    expect(ids(s.context())).toEqual(['c1', 's1'])
    s.update(summary('s1', 'c1', { error: { name: 'APIError', message: 'boom' } }))
    expect(ids(s.context())).toEqual(['u1', 'a1', 'u2', 'a2', 'c1', 's1'])
  })
})

describe('usage() source', () => {
  it("is 'estimate' without provider usage", () => {
    const s = Session.fromMessages(history(), exact())
    expect(s.usage()).toMatchObject({ source: 'estimate', usageTokens: 0 })
  })

  it("is 'usage' right after a finished answer with tokens", () => {
    const s = Session.fromMessages(history(), exact())
    s.append(answered('a3', { input: 10_000, output: 500, cacheRead: 2_000, cacheWrite: 100 }))
    expect(s.usage()).toMatchObject({ source: 'usage', tokens: 12_600, usageTokens: 12_600, localTokens: 0 })
  })

  it('uses total when the provider reports it', () => {
    const s = new Session(exact())
    s.append(user('u1'))
    s.append(answered('a1', { input: 10, output: 5, total: 7_000 }))
    expect(s.usage()).toMatchObject({ source: 'usage', tokens: 7_000 })
  })

  it("is 'mixed' when messages follow it: usage plus the exact count of what follows", () => {
    const s = Session.fromMessages(history(), exact())
    s.append(answered('a3', { input: 10_000, output: 500 }))
    const u4 = user('u4', 'and now?')
    const a4 = assistant('a4', [tool('c9', 'bash', completed(words(300), { cmd: 'ls' }))])
    s.append(u4)
    s.append(a4)
    const local = msgTokens(u4) + msgTokens(a4)
    expect(s.usage()).toMatchObject({ source: 'mixed', usageTokens: 10_500, localTokens: local, tokens: 10_500 + local })
  })

  it('the newest trusted usage wins', () => {
    const s = new Session(exact())
    s.append(user('u1'))
    s.append(answered('a1', { input: 50_000, output: 10 }))
    s.append(user('u2'))
    s.append(answered('a2', { input: 3_000, output: 10 }))
    expect(s.usage()).toMatchObject({ source: 'usage', tokens: 3_010 })
  })

  it('does not trust an unfinished or errored answer', () => {
    const s = new Session(exact())
    s.append(user('u1'))
    s.append(assistant('a1', 'x', { tokens: { input: 50_000, output: 10 } })) // no finish
    expect(s.usage().source).toBe('estimate')
    s.append(assistant('a2', 'x', { finish: 'stop', error: { name: 'APIError', message: 'x' }, tokens: { input: 60_000, output: 10 } }))
    expect(s.usage().source).toBe('estimate')
    expect(s.usage().tokens).toBe(sumTokens(s.messages()))
  })

  it("never trusts a summary's own usage", () => {
    const s = Session.fromMessages(history(), exact())
    s.append(request('c1', { tailStartID: 'u2' }))
    s.append(summary('s1', 'c1', { tokens: { input: 150_000, output: 3_000 } }))
    const u = s.usage()
    expect(u.source).toBe('estimate')
    expect(u.tokens).toBe(sumTokens(s.context()))
    expect(u.tokens).toBeLessThan(10_000)
  })

  it('usage reported before a completed summary no longer describes the context', () => {
    const s = new Session(exact())
    s.append(user('u1', words(100)))
    s.append(answered('a1', { input: 120_000, output: 500 }))
    s.append(request('c1'))
    s.append(summary('s1', 'c1'))
    expect(s.usage().source).toBe('estimate')
    expect(s.usage().tokens).toBe(sumTokens(s.context()))
    // … until a new answer reports usage again
    s.append(user('u2'))
    s.append(answered('a2', { input: 4_000, output: 100 }))
    expect(s.usage()).toMatchObject({ source: 'usage', tokens: 4_100 })
  })

  it('a failed summary does not reset usage', () => {
    const s = new Session(exact())
    s.append(user('u1'))
    s.append(answered('a1', { input: 120_000, output: 500 }))
    s.append(request('c1'))
    s.append(summary('s1', 'c1', { error: { name: 'APIError', message: 'overloaded' } }))
    const u = s.usage()
    expect(u.source).toBe('mixed')
    expect(u.usageTokens).toBe(120_500)
    expect(u.localTokens).toBe(msgTokens(request('c1')) + msgTokens(summary('s1', 'c1', { error: { name: 'APIError', message: 'overloaded' } })))
  })

  it('falls back to the previous usage when the newest answer loses its usage in an update', () => {
    const s = new Session(exact())
    s.append(user('u1'))
    s.append(answered('a1', { input: 1_000, output: 0 }))
    const u2 = user('u2', 'more')
    s.append(u2)
    s.append(answered('a2', { input: 2_000, output: 0 }))
    const a2 = assistant('a2', 'retrying')
    s.update(a2)
    expect(s.usage()).toMatchObject({ source: 'mixed', usageTokens: 1_000, tokens: 1_000 + msgTokens(u2) + msgTokens(a2) })
  })
})

describe('Session queries agree with the stateless functions', () => {
  const msgs: Message[] = [
    user('u1', words(500)),
    assistant('a1', [tool('c1', 'bash', completed(words(3_000)))], { finish: 'tool-calls' }),
    assistant('a1b', 'ok', { finish: 'stop' }),
    user('u2', words(200)),
    assistant('a2', words(700), { finish: 'stop' }),
    request('c1', { tailStartID: 'u2' }),
    summary('s1', 'c1'),
    user('u3', 'continue'),
    assistant('a3', [tool('c2', 'read', completed(words(1_500)))], { finish: 'tool-calls' }),
    assistant('a3b', words(400), { finish: 'stop' }),
    user('u4', 'next'),
    assistant('a4', words(300), { finish: 'stop' }),
  ]
  const cfg = { preserveRecentTokens: 2_500 }
  const s = Session.fromMessages(msgs, exact(cfg))

  it('context() is filterCompacted(messages())', () => {
    expect(s.context()).toEqual(filterCompacted(s.messages()))
    expect(ids(s.context())).toEqual(['c1', 's1', 'u2', 'a2', 'u3', 'a3', 'a3b', 'u4', 'a4'])
  })

  it('turns() are turns(context())', () => {
    expect(s.turns()).toEqual(turnsFn(s.context()))
    expect(s.turns().map((t) => t.id)).toEqual(['u2', 'u3', 'u4'])
  })

  it('select() is select(context(), cfg, model, tokenizer)', () => {
    expect(s.select()).toEqual(selectFn(s.context(), cfg, MODEL, 'o200k'))
  })

  it('toModelMessages() is toModelMessages(context())', () => {
    expect(s.toModelMessages()).toEqual(toModelMessagesFn(s.context()))
    expect(s.toModelMessages({ stripMedia: true, toolOutputMaxChars: 100 })).toEqual(
      toModelMessagesFn(s.context(), { stripMedia: true, toolOutputMaxChars: 100 }),
    )
  })

  it('usage() counts the context only', () => {
    expect(s.usage().tokens).toBe(sumTokens(s.context()))
    expect(s.usage().tokens).toBeLessThan(sumTokens(s.messages()))
  })
})
