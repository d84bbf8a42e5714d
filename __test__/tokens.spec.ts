import { describe, expect, it } from 'vitest'
import { countTokens as gptO200k } from 'gpt-tokenizer/encoding/o200k_base'
import { countTokens as gptCl100k } from 'gpt-tokenizer/encoding/cl100k_base'

import { countTokens, countTokensAsync, estimateTokens } from '../native.js'
import { expectCode, expectRejectCode, rng, words } from './helpers.js'

const noSpecial = { disallowedSpecial: new Set<string>() }
const refO200k = (t: string) => gptO200k(t, noSpecial)
const refCl100k = (t: string) => gptCl100k(t, noSpecial)

const SAMPLES: Record<string, string> = {
  prose: 'The quick brown fox jumps over the lazy dog, then checks the build log again. ',
  code: 'fn main(){let v:Vec<u32>=(0..10).map(|x|x*2).filter(|x|x%3==0).collect();println!("{v:?}");}\n',
  cjk: '上下文压缩是编码代理的核心能力，需要保留关键信息和文件路径。\n',
  japanese: 'コンテキストの圧縮は、コーディングエージェントにとって重要です。',
  json: '{"path":"/src/lib.rs","line":42,"ok":true,"id":"c9f16248d0"}',
  emoji: 'done ✅ 🚀🚀 👩‍💻 — ok',
  whitespace: 'a  b\t\tc\n\n\n  d   \r\n e',
  numbers: '1234567890 3.14159 -42 1e10 0xFF',
  contractions: "I'm sure they've said it's the user's file, we'll see, you'd know",
  specialLooking: 'before <|endoftext|> middle <|im_start|>user after',
  accents: 'Ça coûte déjà très cher, naïve façade, Ärger über Öl',
  base64: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
}

describe('countTokens', () => {
  it('counts "hello world" as 2 tokens in o200k and cl100k', () => {
    expect(countTokens('hello world', 'o200k')).toBe(2)
    expect(countTokens('hello world', 'cl100k')).toBe(2)
  })

  it('counts the empty string as 0', () => {
    expect(countTokens('', 'o200k')).toBe(0)
    expect(countTokens('', 'cl100k')).toBe(0)
  })

  it('the words() helper really is n tokens', () => {
    for (const n of [1, 7, 500]) {
      expect(refO200k(words(n))).toBe(n)
      expect(countTokens(words(n), 'o200k')).toBe(n)
    }
  })

  for (const [name, sample] of Object.entries(SAMPLES)) {
    it(`is exact on ${name} text (o200k and cl100k, against gpt-tokenizer)`, () => {
      for (const t of [sample, sample.repeat(17)]) {
        expect(countTokens(t, 'o200k')).toBe(refO200k(t))
        expect(countTokens(t, 'cl100k')).toBe(refCl100k(t))
      }
    })
  }

  it('o200k and cl100k are different encodings (CJK differs)', () => {
    const t = SAMPLES.cjk.repeat(5)
    expect(countTokens(t, 'o200k')).not.toBe(countTokens(t, 'cl100k'))
  })

  it('counts special-token look-alikes as ordinary text', () => {
    const n = countTokens('<|endoftext|>', 'o200k')
    expect(n).toBeGreaterThan(1)
    expect(n).toBe(refO200k('<|endoftext|>'))
  })

  it('rejects an unknown encoding with CF_INVALID_ARGUMENT', () => {
    for (const enc of ['gpt2', 'p50k', '', 'estimate']) {
      const e = expectCode(() => countTokens('x', enc as 'o200k'), 'CF_INVALID_ARGUMENT')
      expect(e.message).toContain('encoding')
    }
  })
})

describe('countTokensAsync', () => {
  it('resolves to the same count as countTokens', async () => {
    for (const t of Object.values(SAMPLES)) {
      expect(await countTokensAsync(t, 'o200k')).toBe(countTokens(t, 'o200k'))
      expect(await countTokensAsync(t, 'cl100k')).toBe(countTokens(t, 'cl100k'))
    }
    expect(await countTokensAsync('', 'o200k')).toBe(0)
  })

  it('is exact on text larger than its 1 MB slices', async () => {
    // Varied text so that slice boundaries land in many different contexts.
    const r = rng(7)
    const pieces = Object.values(SAMPLES)
    const chunks: string[] = []
    let size = 0
    while (size < 2_600_000) {
      const p = pieces[Math.floor(r() * pieces.length)]
      const cut = p.slice(0, 1 + Math.floor(r() * p.length))
      chunks.push(cut, r() < 0.3 ? '\n' : r() < 0.5 ? ' ' : '')
      size += cut.length + 1
    }
    const big = chunks.join('')
    const sync = countTokens(big, 'o200k')
    expect(await countTokensAsync(big, 'o200k')).toBe(sync)
    expect(sync).toBe(refO200k(big))
    expect(await countTokensAsync(big, 'cl100k')).toBe(countTokens(big, 'cl100k'))
  })

  it('rejects an unknown encoding with CF_INVALID_ARGUMENT', async () => {
    let thrown: unknown
    try {
      await countTokensAsync('x', 'nope' as 'o200k')
    } catch (e) {
      thrown = e
    }
    expect(thrown).toBeInstanceOf(Error)
    expect((thrown as { code: string }).code).toBe('CF_INVALID_ARGUMENT')
  })

  it('rejects with AbortError / CF_ABORTED when the signal is already aborted', async () => {
    const e = await expectRejectCode(countTokensAsync('hello world', 'o200k', AbortSignal.abort()), 'CF_ABORTED')
    expect(e.name).toBe('AbortError')
  })

  it('rejects with AbortError / CF_ABORTED when aborted mid-way through 40 MB', async () => {
    const line = 'The quick brown fox jumps over the lazy dog 12345.\n'
    const big = line.repeat(Math.ceil(40_000_000 / line.length))
    const ac = new AbortController()
    const p = countTokensAsync(big, 'o200k', ac.signal)
    setTimeout(() => ac.abort(), 1)
    const e = await expectRejectCode(p, 'CF_ABORTED')
    expect(e.name).toBe('AbortError')
    // The count itself works on the same text when nobody aborts (and is exact: the line repeats).
    expect(await countTokensAsync(big, 'o200k', new AbortController().signal)).toBe(
      countTokens(line, 'o200k') * Math.ceil(40_000_000 / line.length),
    )
  })
})

describe('estimateTokens', () => {
  it('is 0 for the empty string and at least 1 for any other text', () => {
    expect(estimateTokens('')).toBe(0)
    expect(estimateTokens('a')).toBeGreaterThanOrEqual(1)
    expect(estimateTokens(' ')).toBeGreaterThanOrEqual(1)
  })

  it('stays within 40% of o200k on prose, code, CJK and JSON', () => {
    for (const name of ['prose', 'code', 'cjk', 'json'] as const) {
      const t = SAMPLES[name].repeat(40)
      const exactCount = countTokens(t, 'o200k')
      const err = Math.abs(estimateTokens(t) - exactCount) / exactCount
      expect(err, `${name}: estimate ${estimateTokens(t)} vs o200k ${exactCount}`).toBeLessThan(0.4)
    }
  })

  it('is not chars/4: it beats chars/4 on CJK, minified code and JSON', () => {
    for (const name of ['code', 'cjk', 'json'] as const) {
      const t = SAMPLES[name].repeat(40)
      const exactCount = countTokens(t, 'o200k')
      const quarter = Math.ceil(t.length / 4)
      const est = estimateTokens(t)
      expect(est).not.toBe(quarter)
      expect(Math.abs(est - exactCount), `${name}: estimate ${est}, chars/4 ${quarter}, o200k ${exactCount}`).toBeLessThan(
        Math.abs(quarter - exactCount),
      )
    }
  })

  it('grows with the text', () => {
    const a = estimateTokens(SAMPLES.prose)
    const b = estimateTokens(SAMPLES.prose.repeat(10))
    expect(b).toBeGreaterThan(a * 5)
  })
})
