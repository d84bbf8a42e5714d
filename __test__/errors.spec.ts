// DESIGN §9: every error is an Error with a stable `code`, and its text says what was wrong and
// where (message id, field path).
import { describe, expect, it } from 'vitest'

import {
  Session,
  countTokens,
  countTokensAsync,
  estimateTokens,
  filterCompacted,
  isOverflow,
  prune,
  select,
  splitTurn,
  toModelMessages,
  turns,
  usable,
} from '../native.js'
import type { Message } from '../native.js'
import { MODEL, exact, expectCode, expectRejectCode, user } from './helpers.js'

type Case = [name: string, message: unknown, mustMention: string[]]

const ok = { type: 'text', id: 'ok', text: 'fine' }
const INVALID: Case[] = [
  ['a message without id', { role: 'user', parts: [] }, ['id']],
  ['an empty id', { id: '', role: 'user', parts: [] }, ['id']],
  ['an id that is not a string', { id: 5, role: 'user', parts: [] }, ['id']],
  ['a part without id', { id: 'm1', role: 'user', parts: [ok, { type: 'text', text: 'x' }] }, ['m1', 'parts[1]', 'id']],
  ['a part with an empty id', { id: 'm1', role: 'user', parts: [{ type: 'text', id: '', text: 'x' }] }, ['m1', 'parts[0]', 'id']],
  ['a part without type', { id: 'm1', role: 'user', parts: [{ id: 'p', text: 'x' }] }, ['m1', 'parts[0]', 'type']],
  ['a part that is not an object', { id: 'm1', role: 'user', parts: ['hello'] }, ['m1', 'parts[0]']],
  ['a file part without url', { id: 'm1', role: 'user', parts: [{ type: 'file', id: 'f', mime: 'image/png' }] }, ['m1', 'parts[0]', 'url']],
  ['a file part with an empty url', { id: 'm1', role: 'user', parts: [{ type: 'file', id: 'f', mime: 'image/png', url: '' }] }, ['m1', 'parts[0]', 'url']],
  ['a text that is not a string', { id: 'm1', role: 'user', parts: [{ type: 'text', id: 'p', text: 5 }] }, ['m1', 'parts[0].text']],
  ['a completed tool without output', { id: 'm1', role: 'assistant', parts: [{ type: 'tool', id: 't', callID: 'c', tool: 'bash', state: { status: 'completed', input: {} } }] }, ['m1', 'parts[0].state', 'output']],
  ['a tool with an unknown status', { id: 'm1', role: 'assistant', parts: [{ type: 'tool', id: 't', callID: 'c', tool: 'bash', state: { status: 'done', input: {} } }] }, ['m1', 'parts[0].state', 'done']],
  ['a tool without callID', { id: 'm1', role: 'assistant', parts: [{ type: 'tool', id: 't', tool: 'bash', state: { status: 'running', input: {} } }] }, ['m1', 'parts[0]', 'callID']],
  ['a compaction part without auto', { id: 'm1', role: 'user', parts: [{ type: 'compaction', id: 'c' }] }, ['m1', 'parts[0]', 'auto']],
  ['a negative token count', { id: 'm1', role: 'assistant', parts: [], tokens: { input: -1, output: 0 } }, ['m1', 'tokens.input']],
  ['a negative cache count', { id: 'm1', role: 'assistant', parts: [], tokens: { input: 1, output: 0, cacheRead: -3 } }, ['m1', 'tokens.cacheRead']],
  ['a token count that is a string', { id: 'm1', role: 'assistant', parts: [], tokens: { input: '12', output: 0 } }, ['m1', 'tokens.input']],
  ['usage without output', { id: 'm1', role: 'assistant', parts: [], tokens: { input: 1 } }, ['m1', 'tokens', 'output']],
  ['role robot', { id: 'm1', role: 'robot', parts: [] }, ['m1', 'role', 'robot']],
  ['role tool (not a canonical role)', { id: 'm1', role: 'tool', parts: [] }, ['m1', 'role']],
  ['no role', { id: 'm1', parts: [] }, ['m1', 'role']],
  ['no parts', { id: 'm1', role: 'user' }, ['m1', 'parts']],
  ['parts that are not a list', { id: 'm1', role: 'user', parts: { 0: ok } }, ['m1', 'parts']],
  ['an error without name', { id: 'm1', role: 'assistant', parts: [], error: { message: 'x' } }, ['m1', 'error']],
  ['a parentID that is not a string', { id: 'm1', role: 'assistant', parts: [], parentID: 7 }, ['m1', 'parentID']],
  ['a message that is a string', 'hello', ['object']],
  ['a message that is null', null, ['object']],
  ['a message that is a list', [], ['object']],
]

// NaN and ±Infinity are not JSON; they must still be reported as invalid messages, with id and path.
const NON_FINITE: Case[] = [
  ['a NaN token count', { id: 'm1', role: 'assistant', parts: [], tokens: { input: Number.NaN, output: 0 } }, ['m1', 'tokens.input']],
  ['an infinite token count', { id: 'm1', role: 'assistant', parts: [], tokens: { input: 1, output: Number.POSITIVE_INFINITY } }, ['m1', 'tokens.output']],
  ['a NaN cache count', { id: 'm1', role: 'assistant', parts: [], tokens: { input: 1, output: 1, cacheWrite: Number.NaN } }, ['m1', 'tokens.cacheWrite']],
]

function checkInvalid(fn: () => unknown, mustMention: string[]) {
  const e = expectCode(fn, 'CF_INVALID_MESSAGE')
  for (const s of mustMention) expect(e.message, `error text: ${e.message}`).toContain(s)
  return e
}

describe('CF_INVALID_MESSAGE', () => {
  describe.each(INVALID)('%s', (_name, message, mustMention) => {
    it('append throws it, naming the message and the field, and changes nothing', () => {
      const s = new Session(exact())
      s.append(user('u0', 'before'))
      const before = s.messages()
      checkInvalid(() => s.append(message as Message), mustMention)
      expect(s.messages()).toEqual(before)
      expect(s.length).toBe(1)
    })

    it('fromMessages throws it and says at which index', () => {
      const e = checkInvalid(() => Session.fromMessages([user('u0'), message as Message], exact()), mustMention)
      expect(e.message).toContain('messages[1]')
    })

    it('the stateless functions throw it too', () => {
      const list = [user('u0'), message as Message]
      for (const fn of [
        () => toModelMessages(list),
        () => filterCompacted(list),
        () => prune(list),
        () => select(list),
        () => turns(list),
        () => splitTurn(list, { start: 0, end: 2, id: 'u0' }, 100),
      ]) {
        checkInvalid(fn, mustMention)
      }
    })

    it('fromMessagesAsync rejects with it', async () => {
      const e = await expectRejectCode(Session.fromMessagesAsync([message as Message], exact()), 'CF_INVALID_MESSAGE')
      for (const s of mustMention) expect(e.message).toContain(s)
    })
  })

  it.each(NON_FINITE)('%s is one too (append, fromMessages, stateless)', (_name, message, mustMention) => {
    const s = new Session(exact())
    checkInvalid(() => s.append(message as Message), mustMention)
    expect(s.length).toBe(0)
    checkInvalid(() => Session.fromMessages([user('u0'), message as Message], exact()), [...mustMention, 'messages[1]'])
    checkInvalid(() => toModelMessages([message as Message]), mustMention)
  })

  it('update throws it for an invalid replacement of an existing message', () => {
    const s = new Session(exact())
    const original = user('m1', 'hi')
    s.append(original)
    checkInvalid(() => s.update({ id: 'm1', role: 'user', parts: [{ type: 'file', id: 'f', mime: 'image/png' }] } as never), ['m1', 'parts[0]', 'url'])
    expect(s.get('m1')).toEqual(original)
  })
})

describe('CF_DUPLICATE_ID and CF_NOT_FOUND', () => {
  it('append of a used id', () => {
    const s = new Session(exact())
    s.append(user('m1'))
    const e = expectCode(() => s.append(user('m1', 'other')), 'CF_DUPLICATE_ID')
    expect(e.message).toContain('m1')
  })

  it('fromMessages / fromMessagesAsync / stateless functions with a repeated id', async () => {
    const list = [user('m1'), user('m2'), user('m1')]
    expect(expectCode(() => Session.fromMessages(list, exact()), 'CF_DUPLICATE_ID').message).toContain('m1')
    await expectRejectCode(Session.fromMessagesAsync(list, exact()), 'CF_DUPLICATE_ID')
    expectCode(() => filterCompacted(list), 'CF_DUPLICATE_ID')
    expectCode(() => prune(list), 'CF_DUPLICATE_ID')
  })

  it('update of an unknown id', () => {
    const s = new Session(exact())
    s.append(user('m1'))
    expect(expectCode(() => s.update(user('m2')), 'CF_NOT_FOUND').message).toContain('m2')
  })
})

describe('CF_INVALID_ARGUMENT', () => {
  const cases: Array<[string, () => unknown]> = [
    ['countTokens with an unknown encoding', () => countTokens('x', 'r50k' as never)],
    ['Session without model', () => new Session({} as never)],
    ['Session with a negative context', () => new Session({ model: { limit: { context: -1 } } })],
    ['Session with an unknown tokenizer', () => new Session({ model: MODEL, tokenizer: 'llama' as never })],
    ['Session with a negative reserved', () => new Session({ model: MODEL, compaction: { reserved: -1 } })],
    ['Session with protectedTools not a list', () => new Session({ model: MODEL, compaction: { protectedTools: 'skill' as never } })],
    ['Session with auto not a boolean', () => new Session({ model: MODEL, compaction: { auto: 'yes' as never } })],
    ['fromMessages with bad options', () => Session.fromMessages([], { model: { limit: { context: 'x' as never } } })],
    ['usable without model', () => usable({} as never)],
    ['isOverflow with a negative count', () => isOverflow({ tokens: -1, model: MODEL })],
    ['select with a negative budget', () => select([], { preserveRecentTokens: -1 })],
    ['select with an unknown tokenizer', () => select([], {}, MODEL, 'x' as never)],
    ['prune with a negative minimum', () => prune([], { pruneMinimum: -1 })],
    ['prune with an unknown tokenizer', () => prune([], {}, 'x' as never)],
    ['toModelMessages with a negative toolOutputMaxChars', () => toModelMessages([], { toolOutputMaxChars: -1 })],
    ['splitTurn with a turn outside the list', () => splitTurn([], { start: 0, end: 1, id: 'x' }, 1)],
    ['Session.toModelMessages with bad options', () => new Session({ model: MODEL }).toModelMessages({ stripMedia: 1 as never })],
  ]
  it.each(cases)('%s', (_name, fn) => {
    const e = expectCode(fn, 'CF_INVALID_ARGUMENT')
    expect(e.message.length).toBeGreaterThan(0)
  })

  it('fromMessagesAsync and countTokensAsync reject (or throw) with it', async () => {
    await expectRejectCode(Session.fromMessagesAsync([], {} as never), 'CF_INVALID_ARGUMENT')
    await expectRejectCode((async () => countTokensAsync('x', 'x' as never))(), 'CF_INVALID_ARGUMENT')
  })

  it('a signal that is not an AbortSignal is CF_INVALID_ARGUMENT in both async functions', async () => {
    const notASignal = 5 as unknown as AbortSignal
    await expectRejectCode((async () => countTokensAsync('x', 'o200k', notASignal))(), 'CF_INVALID_ARGUMENT')
    await expectRejectCode((async () => Session.fromMessagesAsync([], exact(), notASignal))(), 'CF_INVALID_ARGUMENT')
  })

  it('arguments of the wrong JS type are reported with a CF_ code too', () => {
    // JS callers have no type checker; DESIGN §9: every error thrown to JS carries a CF_ code.
    for (const fn of [
      () => countTokens(5 as never, 'o200k'),
      () => estimateTokens(undefined as never),
      () => toModelMessages('not a list' as never),
      () => filterCompacted({} as never),
    ]) {
      const e = expectCode(fn, 'CF_INVALID_ARGUMENT')
      expect(e.message.length).toBeGreaterThan(0)
    }
  })
})

describe('one error family', () => {
  it('isContextfoldError takes the native errors and the ContextfoldErrors, narrowing code to ErrorCode', async () => {
    const { ContextfoldError, isContextfoldError } = await import('../dist/index.js')
    const s = new Session({ model: MODEL })
    s.append(user('u1', 'hi'))
    let native: unknown
    try {
      s.append(user('u1', 'again'))
    } catch (e) {
      native = e
    }
    expect(isContextfoldError(native)).toBe(true)
    if (isContextfoldError(native)) {
      const code: import('../dist/index.js').ErrorCode = native.code
      expect(code).toBe('CF_DUPLICATE_ID')
    }
    expect(ContextfoldError.isInstance(native)).toBe(false)

    const ts = new ContextfoldError('CF_RATE_LIMITED', 'slow down', { status: 429 })
    expect(isContextfoldError(ts)).toBe(true)
    expect(ContextfoldError.isInstance(ts)).toBe(true)
    expect(ts).toBeInstanceOf(Error)
    expect(ts).toMatchObject({ name: 'ContextfoldError', code: 'CF_RATE_LIMITED', status: 429, fallbackAllowed: false })

    for (const other of [new Error('x'), Object.assign(new Error('x'), { code: 'ENOENT' }), { code: 'CF_IO' }, 'CF_IO', null, undefined]) {
      expect(isContextfoldError(other)).toBe(false)
    }
  })

  it('the check holds across realms and copies of the package, where instanceof does not', async () => {
    const { runInNewContext } = await import('node:vm')
    const { ContextfoldError, isContextfoldError } = await import('../dist/index.js')
    const foreignNative = runInNewContext("Object.assign(new Error('locked'), { code: 'CF_SESSION_LOCKED' })") as unknown
    expect(foreignNative instanceof Error).toBe(false)
    expect(isContextfoldError(foreignNative)).toBe(true)
    // A ContextfoldError of another copy of the package carries the same registered symbol.
    const copy = runInNewContext(
      "const e = new Error('copy'); e.code = 'CF_AUTH'; Object.defineProperty(e, Symbol.for('contextfold.error'), { value: true }); e",
    ) as unknown
    expect(ContextfoldError.isInstance(copy)).toBe(true)
    expect(isContextfoldError(copy)).toBe(true)
  })

  it('the database stores and the summarizers raise ContextfoldErrors', async () => {
    const { compact, ContextfoldError, isContextfoldError } = await import('../dist/index.js')
    const { PostgresSession } = await import('../dist/postgres/index.js')
    const open = PostgresSession.open({ id: 'x' } as never)
    await expect(open).rejects.toSatisfy((e: unknown) => ContextfoldError.isInstance(e) && (e as { code: string }).code === 'CF_INVALID_ARGUMENT')
    const s = new Session({ model: MODEL })
    s.append(user('u1', 'x'.repeat(4000)))
    const result = await compact(s, { summarizer: async () => { throw Object.assign(new Error('nope'), { status: 401 }) } })
    expect(result.status).toBe('failed')
    if (result.status === 'failed') {
      expect(isContextfoldError(result.error)).toBe(true)
      expect(result.error.code).toBe('CF_AUTH')
    }
  })
})
