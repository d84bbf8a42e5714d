// contextfoldProcessor's cost per model call in a Mastra agent, beside Mastra's TokenLimiter, at
// 100, 1,000 and 10,000 messages of conversation. Each call adds an answer and its tool result
// (corpus text, 0.5-4 KB outputs) and runs what Mastra runs before the model call:
// - a processor whose hooks do nothing (the floor);
// - contextfoldProcessor: `processInputStep` (thread, tools, output limit into the step's state),
//   then `processLLMRequest` on the provider prompt (match the thread's conversation, append the 2
//   new messages tokenizing them exactly, count system prompt and tools, decide);
//   With its defaults the `cache` prune policy clears old tool outputs of this conversation (its
//   messages carry no times, so the provider's cache counts as cold), and from then on every call
//   hands back the pruned conversation, a copy as long as it; `prune: false` shows the rest alone.
// - `TokenLimiter.processLLMRequest` (`@mastra/core/processors`) on the same prompt.
// Mastra builds a new prompt from memory for every call, so both get a new array each time.
// Run: node benchmark/mastra.mjs   (prints a markdown table; release build of the addon; the
// @mastra/core of the clone's devDependencies, which loads on Node 20 as on 24)
const { TokenLimiter } = await import('@mastra/core/processors')
const { contextfoldProcessor } = await import('../dist/mastra/index.js')
const { corpusChunks, corpusStrings, rng } = await import('./corpus-text.mjs')
const { perCallTable } = await import('./timing.mjs')

const SIZES = [100, 1_000, 10_000]
const CALLS = 50
const BUDGET_MS = 10_000 // per contender and size: the slowest get fewer calls (at least 5)
const WINDOW = 100_000_000 // large: the cost of counting and deciding, not of compacting

const strings = corpusStrings().filter((s) => s.length >= 40 && s.length <= 1_200)
const outputs = corpusChunks({ targetBytes: 3e6, minChars: 512, maxChars: 4096, seed: 11 }).chunks

/** A provider prompt of about `n` messages as Mastra builds it: system, request, tool steps. */
function conversation(n, seed) {
  const rand = rng(seed)
  const pick = (xs) => xs[Math.floor(rand() * xs.length)]
  const msgs = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: [{ type: 'text', text: pick(strings), providerOptions: { mastra: { createdAt: 1 } } }] }]
  for (let i = 0; msgs.length < n; i++) step(msgs, i, pick)
  return { msgs, more: (i) => step([], n + i, pick) }
}

function step(msgs, i, pick) {
  msgs.push({ role: 'assistant', content: [{ type: 'text', text: pick(strings) }, { type: 'tool-call', toolCallId: `c${i}`, toolName: 'bash', input: { command: `cat file${i}.ts` } }] })
  msgs.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${i}`, toolName: 'bash', output: { type: 'text', value: pick(outputs) }, input: { command: `cat file${i}.ts` } }] })
  return msgs
}

// What Mastra hands the processors: a router model, the agent's tools, the memory thread.
const model = { specificationVersion: 'v2', provider: 'openai', modelId: 'gpt-4o' }
const tools = { bash: { type: 'function', description: 'Runs a shell command.', parameters: { jsonSchema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } } } }
const requestContext = { get: (key) => (key === 'MastraMemory' ? { thread: { id: 'thread-1' } } : undefined) }

const contenders = {
  'no-op processor': () => {
    const p = { processInputStep: () => undefined, processLLMRequest: async () => undefined }
    return async (prompt) => {
      const state = {}
      p.processInputStep({ state, tools })
      return p.processLLMRequest({ prompt, model, state })
    }
  },
  contextfoldProcessor: () => processor({}),
  'contextfoldProcessor, prune: false': () => processor({ prune: false }),
  'Mastra TokenLimiter': () => {
    const limiter = new TokenLimiter({ limit: WINDOW })
    return (prompt) => limiter.processLLMRequest({ prompt })
  },
}

/** contextfoldProcessor as Mastra calls it: both hooks, a new state per step. */
function processor(options) {
  const p = contextfoldProcessor({ contextWindow: WINDOW, ...options })
  return async (prompt) => {
    const state = {}
    p.processInputStep({ state, tools, requestContext, modelSettings: { maxOutputTokens: 4096 } })
    return p.processLLMRequest({ prompt, model, state, steps: [] })
  }
}

await perCallTable(contenders, SIZES, (n) => conversation(n, n), { calls: CALLS, budgetMs: BUDGET_MS, ours: 'contextfoldProcessor' })
console.log(`\nNode ${process.version}, ${process.platform}-${process.arch}, @mastra/core ${(await import('@mastra/core/package.json', { with: { type: 'json' } })).default.version}`)
