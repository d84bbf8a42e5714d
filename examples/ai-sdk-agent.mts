// An AI SDK tool loop that reads ~600k tokens of files through a 32k window: contextfold compacts
// the conversation whenever the next call would not fit. Run: node examples/ai-sdk-agent.mts
// (Node 22.18+, which runs TypeScript), or through `npm test` (__test__/examples.spec.ts).
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai'
import { contextfoldMiddleware } from 'contextfold/ai'
import { z } from 'zod'

import { offlineModel } from './offline-model.mts'

const model = wrapLanguageModel({ model: offlineModel(), middleware: contextfoldMiddleware({ contextWindow: 32_000 }) })
const readFile = tool({
  description: 'Read a file',
  inputSchema: z.object({ path: z.string() }),
  execute: async ({ path }) => `// ${path}\n` + 'export const value = compute(input, options)\n'.repeat(2_000),
})
export const result = await generateText({ model, tools: { readFile }, stopWhen: stepCountIs(40), maxOutputTokens: 4_096, prompt: 'Read every module under src/.' })
console.log(`${result.text} (${result.steps.length} steps)`)
