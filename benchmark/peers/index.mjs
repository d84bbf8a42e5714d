// What the benchmarks use of LangChain.js and Mastra, resolved from this folder's own install.
export { AIMessage, HumanMessage, SystemMessage, ToolMessage, countTokensApproximately, trimMessages } from 'langchain'
export { ChatOpenAI } from '@langchain/openai'
export { TokenLimiterProcessor } from '@mastra/core/processors'
export { Tiktoken } from 'js-tiktoken/lite'
export { default as o200kRanks } from 'js-tiktoken/ranks/o200k_base'
