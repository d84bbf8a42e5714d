// What each entry point loads: `import 'contextfold'` resolves none of the integrations' peers
// (`ai`, `effect`, `@opencode-ai/*`, pi's packages, `@mastra/*`, `@opentelemetry/api`, `langchain` and `@langchain/*`), and `contextfold/opencode`,
// `contextfold/pi` and `contextfold/mastra` take only types from their agents' packages.
import { describe, expect, it } from 'vitest'

import { packagesResolvedBy } from './resolved.js'

const packagesLoadedBy = (entry: string) => packagesResolvedBy([`await import(${JSON.stringify(entry)})`])[0]

const PEERS = /^(ai|effect|langchain|@langchain\/.*|@opencode-ai\/.*|@opentelemetry\/.*|@mastra\/.*|@(mariozechner|earendil-works)\/pi-.*)(\/|$)/

describe('what an import loads', () => {
  it("import 'contextfold' loads no peer of an integration", () => {
    const loaded = packagesLoadedBy('contextfold')
    expect(loaded).toContain('contextfold')
    expect(loaded.filter((p) => PEERS.test(p))).toEqual([])
  })

  it("import 'contextfold/ai' loads no LangChain package; 'contextfold/langchain' loads langchain and @langchain/core", () => {
    expect(packagesLoadedBy('contextfold/ai').filter((p) => /^(langchain|@langchain\/)/.test(p))).toEqual([])
    const loaded = packagesLoadedBy('contextfold/langchain')
    expect(loaded).toContain('contextfold/langchain')
    expect(loaded.some((p) => p.startsWith('@langchain/core'))).toBe(true)
    expect(loaded.some((p) => /^langchain(\/|$)/.test(p))).toBe(true)
    // The AI SDK's engine it runs on loads no `ai`.
    expect(loaded.filter((p) => /^(ai|effect|@opencode-ai\/.*)(\/|$)/.test(p))).toEqual([])
  })

  it("import 'contextfold/opencode' loads nothing of opencode (its types only), nor ai or effect", () => {
    const loaded = packagesLoadedBy('contextfold/opencode')
    expect(loaded).toContain('contextfold/opencode')
    expect(loaded.filter((p) => PEERS.test(p))).toEqual([])
  })

  it("import 'contextfold/pi' loads no pi package: pi hands the extension what it needs", () => {
    const [loaded] = packagesResolvedBy([
      `const pi = await import('contextfold/pi')`,
      `if (typeof pi.default !== 'function' || typeof pi.createPiExtension !== 'function') throw new Error('no extension factory')`,
    ])
    expect(loaded).toContain('contextfold/pi')
    expect(loaded.filter((p) => PEERS.test(p))).toEqual([])
  })

  it("import 'contextfold/mastra' loads nothing of Mastra, nor ai: the processor is typed structurally", () => {
    const [loaded] = packagesResolvedBy([
      `const m = await import('contextfold/mastra')`,
      `const p = m.contextfoldProcessor({ contextWindow: 32000 })`,
      `if (typeof p.processInputStep !== 'function' || typeof p.processLLMRequest !== 'function') throw new Error('no processor')`,
    ])
    expect(loaded).toContain('contextfold/mastra')
    expect(loaded.filter((p) => PEERS.test(p))).toEqual([])
  })

  it('ts/native.ts re-exports every value of the native addon, and the root hands out those same objects', async () => {
    const esm = (await import('../dist/index.js')) as Record<string, unknown>
    const wrapper = (await import('../dist/native.js')) as Record<string, unknown>
    const native = (await import('../native.js')) as Record<string, unknown>
    const values = Object.keys(native).filter((k) => k !== 'default')
    expect(values.length).toBeGreaterThan(20)
    // ts/native.ts is generated: a value missing or different here means it is stale.
    expect(values.filter((k) => wrapper[k] !== native[k])).toEqual([])
    // The curated root re-exports a subset; what it shares with the addon is not wrapped or copied.
    const shared = values.filter((k) => k in esm)
    expect(shared).toContain('Session')
    expect(shared.filter((k) => esm[k] !== native[k])).toEqual([])
  })

  it("import 'contextfold/ai' loads no opencode package", () => {
    expect(packagesLoadedBy('contextfold/ai').filter((p) => p.startsWith('@opencode-ai/'))).toEqual([])
  })
})
