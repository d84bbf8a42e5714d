// A scripted stand-in for a real model, so the AI SDK example runs offline: it reads 30 files,
// one tool call per step, then answers. Swap in any AI SDK model (`openai('gpt-4o')`...) for real use.
import { MockLanguageModelV2 } from 'ai/test'

export function offlineModel(): MockLanguageModelV2 {
  let step = 0
  return new MockLanguageModelV2({
    provider: 'offline',
    modelId: 'gpt-4o',
    doGenerate: async () => {
      const usage = { inputTokens: 0, outputTokens: 10, totalTokens: 10 }
      if (step < 30) {
        const input = JSON.stringify({ path: `src/module-${step++}.ts` })
        return { content: [{ type: 'tool-call', toolCallId: `call-${step}`, toolName: 'readFile', input }], finishReason: 'tool-calls', usage, warnings: [] }
      }
      return { content: [{ type: 'text', text: 'Read 30 modules.' }], finishReason: 'stop', usage, warnings: [] }
    },
  })
}
