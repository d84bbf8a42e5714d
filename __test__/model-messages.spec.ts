// toModelMessages (stateless and Session): AI SDK ModelMessages with the tool-pair rule, markers for
// cleared / interrupted / stripped content, head+tail truncation.
import { describe, expect, it } from 'vitest'

import { Session, toModelMessages } from '../native.js'
import type { ConvertOptions, Message, ModelMessage } from '../native.js'
import { unknownPart } from '../dist/index.js'
import {
  INTERRUPTED,
  PRUNED,
  assistant,
  checkToolPairs,
  completed,
  exact,
  expectCode,
  failedTool,
  file,
  pending,
  reasoning,
  request,
  running,
  summary,
  system,
  text,
  tool,
  user,
} from './helpers.js'

const PNG = 'data:image/png;base64,iVBORw0KGgo='
type ToolMsg = Extract<ModelMessage, { role: 'tool' }>
type AssistantMsg = Extract<ModelMessage, { role: 'assistant' }>

const results = (out: ModelMessage[]) => out.filter((m): m is ToolMsg => m.role === 'tool').flatMap((m) => m.content)
const onlyResult = (msgs: Message[], opts?: ConvertOptions<'ai-sdk'>) => {
  const r = results(toModelMessages(msgs, opts))
  expect(r).toHaveLength(1)
  return r[0].output
}

describe('toModelMessages', () => {
  it('converts system, user and assistant messages with tool calls and their results', () => {
    const msgs: Message[] = [
      system('s', 'be brief'),
      user('u', [text('look at this'), file('image/png', PNG, 'x.png'), file('application/pdf', 'https://e.x/spec.pdf', 'spec.pdf')]),
      assistant('a', [
        reasoning('thinking'),
        text('running it'),
        tool('c1', 'bash', completed('file1\nfile2', { cmd: 'ls' })),
        tool('c2', 'read', failedTool('ENOENT: no such file', { path: 'x' })),
        tool('c3', 'edit', running({ path: 'y' })),
        tool('c4', 'grep', pending({ q: 'z' })),
      ]),
    ]
    expect(toModelMessages(msgs)).toEqual([
      { role: 'system', content: 'be brief' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look at this' },
          { type: 'image', image: PNG, mediaType: 'image/png' },
          { type: 'file', data: 'https://e.x/spec.pdf', mediaType: 'application/pdf', filename: 'spec.pdf' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'thinking' },
          { type: 'text', text: 'running it' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: { cmd: 'ls' } },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'read', input: { path: 'x' } },
          { type: 'tool-call', toolCallId: 'c3', toolName: 'edit', input: { path: 'y' } },
          { type: 'tool-call', toolCallId: 'c4', toolName: 'grep', input: { q: 'z' } },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'bash', output: { type: 'text', value: 'file1\nfile2' } },
          { type: 'tool-result', toolCallId: 'c2', toolName: 'read', output: { type: 'error-text', value: 'ENOENT: no such file' } },
          { type: 'tool-result', toolCallId: 'c3', toolName: 'edit', output: { type: 'error-text', value: INTERRUPTED } },
          { type: 'tool-result', toolCallId: 'c4', toolName: 'grep', output: { type: 'error-text', value: INTERRUPTED } },
        ],
      },
    ])
  })

  it('puts text that follows tool calls after their results', () => {
    const out = toModelMessages([
      user('u'),
      assistant('a', [text('let me check'), tool('c1', 'bash', completed('ok')), text('all good'), tool('c2', 'bash', completed('ok2')), text('done')]),
    ])
    expect(out.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant'])
    expect((out[3] as AssistantMsg).content[0]).toEqual({ type: 'text', text: 'all good' })
    expect((out[5] as AssistantMsg).content).toEqual([{ type: 'text', text: 'done' }])
    expect(checkToolPairs(out)).toBe(2)
  })

  it('makes duplicate call ids unique, within and across messages, keeping each pair together', () => {
    const out = toModelMessages([
      user('u'),
      assistant('a1', [tool('dup', 'bash', completed('one')), tool('dup', 'bash', completed('two'))]),
      user('u2'),
      assistant('a2', [tool('dup', 'read', failedTool('three')), tool('dup_1', 'bash', completed('four'))]),
    ])
    expect(checkToolPairs(out)).toBe(4)
    const r = results(out)
    expect(new Set(r.map((x) => x.toolCallId)).size).toBe(4)
    expect(r[0].toolCallId).toBe('dup') // the first use keeps its id
    // each result still carries its own output
    expect(r.map((x) => x.output.value)).toEqual(['one', 'two', 'three', 'four'])
  })

  it('leaves errored answers out, tool calls included', () => {
    const out = toModelMessages([
      user('u'),
      assistant('bad', [text('partial'), tool('c1', 'bash', completed('x'))], { error: { name: 'APIError', message: 'overloaded' } }),
      assistant('ok', 'fine'),
    ])
    expect(out).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'question u' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'fine' }] },
    ])
  })

  it('keeps an aborted answer that produced something (opencode)', () => {
    const out = toModelMessages([
      user('u'),
      assistant('ab', [text('half an answer'), tool('c1', 'bash', running())], { error: { name: 'MessageAbortedError', message: 'aborted' } }),
    ])
    expect(out.map((m) => m.role)).toEqual(['user', 'assistant', 'tool'])
    expect(results(out)[0].output).toEqual({ type: 'error-text', value: INTERRUPTED })
  })

  it('ignores unknown part types and empty text', () => {
    const out = toModelMessages([
      user('u', [text(''), unknownPart({ type: 'agent', id: 'ag', name: 'build' }), text('hi')]),
      assistant('a', [unknownPart({ type: 'step-start', id: 'ss' }), text('yo'), unknownPart({ type: 'step-finish', id: 'sf', reason: 'stop' }), reasoning('')]),
      user('empty', [text('')]),
    ])
    expect(out).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'yo' }] },
    ])
  })

  it('shows a pruned output as "[Old tool result content cleared]"', () => {
    expect(onlyResult([assistant('a', [tool('c', 'bash', completed('secret output', {}, { compactedAt: 1 }))])])).toEqual({
      type: 'text',
      value: PRUNED,
    })
  })

  it('a compaction request reads as a user turn and its summary as the answer', () => {
    const out = toModelMessages([request('c1'), summary('s1', 'c1', { body: 'We fixed the parser.' }), user('u2', 'next')])
    expect(out.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    const req = out[0] as Extract<ModelMessage, { role: 'user' }>
    expect(req.content).toHaveLength(1)
    expect(req.content[0].type).toBe('text')
    expect((req.content[0] as { text: string }).text.length).toBeGreaterThan(0)
    expect(out[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'We fixed the parser.' }] })
  })

  describe('stripMedia', () => {
    const msgs = (): Message[] => [
      user('u', [
        text('see'),
        file('image/png', PNG, 'x.png'),
        file('application/pdf', 'data:application/pdf;base64,JVBERi0=', 'spec.pdf'),
        file('text/plain', 'data:text/plain;base64,aGk=', 'notes.txt'),
      ]),
    ]

    it('replaces images and PDFs with [Attached <mime>: <filename>]', () => {
      expect(toModelMessages(msgs(), { stripMedia: true })).toEqual([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'see' },
            { type: 'text', text: '[Attached image/png: x.png]' },
            { type: 'text', text: '[Attached application/pdf: spec.pdf]' },
            { type: 'file', data: 'data:text/plain;base64,aGk=', mediaType: 'text/plain', filename: 'notes.txt' },
          ],
        },
      ])
    })

    it('keeps media without it', () => {
      const content = (toModelMessages(msgs(), { stripMedia: false })[0] as Extract<ModelMessage, { role: 'user' }>).content
      expect(content.map((c) => c.type)).toEqual(['text', 'image', 'file', 'file'])
    })

    it('marks a file without filename too, without its data', () => {
      const out = toModelMessages([user('u', [file('image/jpeg', 'data:image/jpeg;base64,AAAA')])], { stripMedia: true })
      const t = ((out[0] as Extract<ModelMessage, { role: 'user' }>).content[0] as { text: string }).text
      expect(t.startsWith('[Attached image/jpeg: ')).toBe(true)
      expect(t.endsWith(']')).toBe(true)
      expect(t).not.toContain('AAAA')
    })

    it('covers tool attachments: media content without it, a marker with it', () => {
      const m = [
        assistant('a', [
          tool('c', 'screenshot', completed('took it', {}, { attachments: [{ id: 'at', mime: 'image/png', url: PNG, filename: 'shot.png' }] })),
        ]),
      ]
      expect(onlyResult(m)).toEqual({
        type: 'content',
        value: [
          { type: 'text', text: 'took it' },
          { type: 'media', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
        ],
      })
      const stripped = onlyResult(m, { stripMedia: true })
      expect(stripped.type).toBe('text')
      expect(stripped.value).toContain('took it')
      expect(stripped.value).toContain('[Attached image/png: shot.png]')
      expect(JSON.stringify(stripped)).not.toContain('iVBORw0KGgo=')
    })
  })

  describe('toolOutputMaxChars', () => {
    const out = (output: string, max: number) => onlyResult([assistant('a', [tool('c', 'bash', completed(output))])], { toolOutputMaxChars: max })

    it('keeps head and tail with an "omitted N chars" marker', () => {
      const r = out('abcdefghij', 4)
      expect(r.type).toBe('text')
      const v = r.value as string
      expect(v.startsWith('ab')).toBe(true)
      expect(v.endsWith('ij')).toBe(true)
      expect(v).toMatch(/omitted 6 chars/)
      expect(v).not.toContain('cdefgh')
    })

    it('keeps max chars in total around the marker on big outputs', () => {
      const big = 'H'.repeat(5_000) + 'M'.repeat(10_000) + 'T'.repeat(5_000)
      const v = out(big, 2_000).value as string
      expect(v).toMatch(/omitted 18000 chars/)
      expect(v.startsWith('H'.repeat(1_000))).toBe(true)
      expect(v.endsWith('T'.repeat(1_000))).toBe(true)
      expect(v).not.toContain('M')
      const kept = v.replace(/\n?\[[^\]]*omitted 18000 chars[^\]]*\]\n?/, '')
      expect(kept.length).toBe(2_000)
    })

    it('leaves outputs up to the limit alone', () => {
      expect(out('abcd', 4)).toEqual({ type: 'text', value: 'abcd' })
      expect(out('', 4)).toEqual({ type: 'text', value: '' })
      expect(onlyResult([assistant('a', [tool('c', 'bash', completed('x'.repeat(50_000)))])])).toEqual({
        type: 'text',
        value: 'x'.repeat(50_000),
      })
    })

    it('counts characters, not bytes, and never splits a character', () => {
      const cjk = out('日本語のテキストです', 4).value as string
      expect(cjk.startsWith('日本')).toBe(true)
      expect(cjk.endsWith('です')).toBe(true)
      expect(cjk).toMatch(/omitted 6 chars/)
      const emoji = out('🚀'.repeat(30), 5).value as string
      expect(emoji.isWellFormed()).toBe(true)
      expect(emoji.startsWith('🚀')).toBe(true)
      expect(emoji.endsWith('🚀')).toBe(true)
    })

    it('does not touch a pruned output', () => {
      expect(onlyResult([assistant('a', [tool('c', 'bash', completed('x'.repeat(100), {}, { compactedAt: 5 }))])], { toolOutputMaxChars: 4 })).toEqual({
        type: 'text',
        value: PRUNED,
      })
    })
  })

  it('rejects bad options with CF_INVALID_ARGUMENT and bad messages with CF_INVALID_MESSAGE', () => {
    expect(expectCode(() => toModelMessages([], { toolOutputMaxChars: -1 }), 'CF_INVALID_ARGUMENT').message).toContain('toolOutputMaxChars')
    expect(expectCode(() => toModelMessages([], { stripMedia: 'yes' as never }), 'CF_INVALID_ARGUMENT').message).toContain('stripMedia')
    const e = expectCode(() => toModelMessages([user('u1'), { id: 'm2', role: 'assistant', parts: [{ type: 'tool', id: 't' }] } as never]), 'CF_INVALID_MESSAGE')
    expect(e.message).toContain('m2')
    expect(e.message).toContain('parts[0]')
  })
})

describe('Session.toModelMessages', () => {
  const msgs: Message[] = [
    user('u1', 'old question'),
    assistant('a1', [tool('c1', 'bash', completed('old output'))]),
    user('u2', 'recent question'),
    assistant('a2', [tool('c2', 'bash', completed('recent output'))]),
    request('c', { tailStartID: 'u2' }),
    summary('s', 'c', { body: 'Summary.' }),
    user('u3', 'next'),
  ]

  it('converts the context (filterCompacted), not the whole history', () => {
    const s = Session.fromMessages(msgs, exact())
    const out = s.toModelMessages()
    expect(JSON.stringify(out)).not.toContain('old')
    expect(out.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'tool', 'user'])
    expect(out[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Summary.' }] })
    expect(out[2]).toEqual({ role: 'user', content: [{ type: 'text', text: 'recent question' }] })
    expect(results(out)).toEqual([{ type: 'tool-result', toolCallId: 'c2', toolName: 'bash', output: { type: 'text', value: 'recent output' } }])
  })

  it('applies compaction.toolOutputMaxChars by default; an explicit option overrides it', () => {
    const s = Session.fromMessages([user('u'), assistant('a', [tool('c', 'bash', completed('abcdefghij'))])], exact({ toolOutputMaxChars: 4 }))
    expect(results(s.toModelMessages())[0].output.value).toMatch(/^ab[\s\S]*omitted 6 chars[\s\S]*ij$/)
    expect(results(s.toModelMessages({ toolOutputMaxChars: 100 }))[0].output.value).toBe('abcdefghij')
    const plain = Session.fromMessages([user('u'), assistant('a', [tool('c', 'bash', completed('abcdefghij'))])], exact())
    expect(results(plain.toModelMessages())[0].output.value).toBe('abcdefghij')
  })

  it('honours stripMedia', () => {
    const s = Session.fromMessages([user('u', [file('image/png', PNG, 'x.png')])], exact())
    expect(s.toModelMessages({ stripMedia: true })).toEqual([{ role: 'user', content: [{ type: 'text', text: '[Attached image/png: x.png]' }] }])
    expect(s.toModelMessages()).toEqual([{ role: 'user', content: [{ type: 'image', image: PNG, mediaType: 'image/png' }] }])
  })

  it('rejects bad options with CF_INVALID_ARGUMENT', () => {
    const s = Session.fromMessages(msgs, exact())
    expectCode(() => s.toModelMessages({ toolOutputMaxChars: -3 }), 'CF_INVALID_ARGUMENT')
  })
})
