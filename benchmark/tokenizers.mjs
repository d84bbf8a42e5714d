// The four exact o200k counters, each loaded through its package's documented entry point and
// called through its fastest count-only API. Each loader returns `(text) => tokenCount`.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

export const COUNTERS = {
  // Native: N-API call per text; counts without building a token vector.
  contextfold: async () => {
    const cf = require('../native.js')
    return (text) => cf.countTokens(text, 'o200k')
  },
  // `Tokenizer#count` is its counting entry point (README: "Estimate tokens using an encoding").
  'ai-tokenizer': async () => {
    const { Tokenizer } = await import('ai-tokenizer')
    const o200k = await import('ai-tokenizer/encoding/o200k_base')
    const tok = new Tokenizer(o200k)
    return (text) => tok.count(text)
  },
  // `countTokens` from the o200k_base entry counts natively, without an output array.
  'gpt-tokenizer': async () => {
    const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base')
    return (text) => countTokens(text)
  },
  // js-tiktoken has no count API: encode and take the length (lite build + o200k ranks, per README).
  'js-tiktoken': async () => {
    const { Tiktoken } = await import('js-tiktoken/lite')
    const { default: o200k } = await import('js-tiktoken/ranks/o200k_base')
    const enc = new Tiktoken(o200k)
    return (text) => enc.encode(text).length
  },
}

export const NAMES = Object.keys(COUNTERS)
