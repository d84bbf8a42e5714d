// The public surface, read with the TypeScript compiler from the built typings as an app sees
// them: every entry of package.json's `exports`. The root holds what an app uses, at most 60
// names; all entries together at most 150 distinct names; a name two entries export is one
// declaration. A new root name is a decision: it changes the list below.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, string | { types?: string }> }

const ENTRIES = Object.entries(PKG.exports)
  .filter(([, e]) => typeof e === 'object' && e.types)
  .map(([key, e]) => ({ name: key === '.' ? 'contextfold' : `contextfold/${key.slice(2)}`, file: join(ROOT, (e as { types: string }).types) }))

function surface(): Map<string, Map<string, string>> {
  const program = ts.createProgram(
    ENTRIES.map((e) => e.file),
    { skipLibCheck: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true },
  )
  const checker = program.getTypeChecker()
  const out = new Map<string, Map<string, string>>()
  for (const entry of ENTRIES) {
    const source = program.getSourceFile(entry.file)
    if (!source) throw new Error(`${entry.file} is not built`)
    const names = new Map<string, string>()
    for (const symbol of checker.getExportsOfModule(checker.getSymbolAtLocation(source)!)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
      const decl = target.declarations?.[0]
      names.set(symbol.name, decl ? `${decl.getSourceFile().fileName}:${decl.pos}` : symbol.name)
    }
    out.set(entry.name, names)
  }
  return out
}

const ROOT_NAMES = [
  'Audit', 'AutoCompactor', 'AutoCompactorEvent', 'AutoCompactorOptions', 'BudgetTool', 'CompactHooks', 'CompactOptions',
  'CompactionConfig', 'CompactionPart', 'CompactionPlan', 'CompactionPreview', 'CompactionResult', 'ContextBudget', 'ContextUsage',
  'ContextfoldError', 'ErrorCode', 'ExtractiveOptions', 'FilePart', 'ImportOptions', 'ImportResult', 'Message', 'ModelMessage',
  'OpenAICompatibleOptions', 'Part', 'PrunePolicy', 'PruneResult', 'ReasoningPart', 'Session', 'SessionFile', 'SessionLog',
  'SessionOptions', 'SessionStore', 'StoreOptions', 'Summarizer', 'SummaryRequest', 'SummaryResponse', 'TelemetryOptions',
  'TemplateName', 'TextPart', 'ToolPart', 'ToolState', 'TranscriptFormat', 'TranscriptSource',
  'UnknownPart', 'Usage', 'budgetNotices', 'compact', 'contextBudget', 'contextBudgetTool', 'countTokens', 'extractiveSummarizer', 'fileStore',
  'filterCompacted', 'importTranscript', 'importTranscriptAsync', 'isContextfoldError', 'openAICompatibleSummarizer',
  'toModelMessages', 'unknownPart',
]

describe('the public surface', () => {
  const entries = surface()

  it('the root entry holds what an app uses, at most 60 names', () => {
    const root = [...entries.get('contextfold')!.keys()].sort()
    expect(root).toEqual([...ROOT_NAMES].sort())
    expect(root.length).toBeLessThanOrEqual(60)
  })

  it('all entries together export at most 150 distinct names, and a name is one declaration wherever it is exported', () => {
    const declarations = new Map<string, Set<string>>()
    for (const names of entries.values()) {
      for (const [name, decl] of names) declarations.set(name, (declarations.get(name) ?? new Set()).add(decl))
    }
    expect(declarations.size).toBeLessThanOrEqual(150)
    const twoMeanings = [...declarations].filter(([, decls]) => decls.size > 1).map(([name]) => name)
    expect(twoMeanings).toEqual([])
  })

  it('the native addon is not an entry point of its own', () => {
    expect(ENTRIES.map((e) => e.name)).not.toContain('contextfold/native')
  })
})
