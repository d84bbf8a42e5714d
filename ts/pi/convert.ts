// pi's `convertToLlm` (0.73 to 0.87 alike): the agent's messages as the model gets them. A summary in
// the conversation form converts the agent's last request the same way, so that its prefix matches
// what the provider cached. Done here rather than imported: pi's loader does not resolve a dynamic
// import of its own package from an extension's dependencies (pi 0.87), and `convertToLlm` in the
// extension's options replaces it.
import type { PiMessage } from './types.js'

const COMPACTION_SUMMARY_PREFIX = 'The conversation history before this point was compacted into the following summary:\n\n<summary>\n'
const COMPACTION_SUMMARY_SUFFIX = '\n</summary>'
const BRANCH_SUMMARY_PREFIX = 'The following is a summary of a branch that this conversation came back from:\n\n<summary>\n'
const BRANCH_SUMMARY_SUFFIX = '</summary>'

type Json = Record<string, unknown>

/** A shell run the user started (`!cmd`) as pi tells the model about it. */
function bashExecutionText(m: Json): string {
  let text = `Ran \`${String(m.command)}\`\n`
  text += m.output ? `\`\`\`\n${String(m.output)}\n\`\`\`` : '(no output)'
  if (m.cancelled) text += '\n\n(command cancelled)'
  else if (typeof m.exitCode === 'number' && m.exitCode !== 0) text += `\n\nCommand exited with code ${m.exitCode}`
  if (m.truncated && m.fullOutputPath) text += `\n\n[Output truncated. Full output: ${String(m.fullOutputPath)}]`
  return text
}

const user = (text: string, m: PiMessage): PiMessage => ({ role: 'user', content: [{ type: 'text', text }], timestamp: m.timestamp })

/** The agent's messages as pi-ai messages: summaries, shell runs and custom messages become user messages. */
export function convertToLlm(messages: readonly PiMessage[]): PiMessage[] {
  return messages.flatMap((m): PiMessage[] => {
    switch (m.role) {
      case 'bashExecution':
        return m.excludeFromContext ? [] : [user(bashExecutionText(m), m)]
      case 'custom':
        return [{ role: 'user', content: typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content, timestamp: m.timestamp }]
      case 'branchSummary':
        return [user(BRANCH_SUMMARY_PREFIX + String(m.summary) + BRANCH_SUMMARY_SUFFIX, m)]
      case 'compactionSummary':
        return [user(COMPACTION_SUMMARY_PREFIX + String(m.summary) + COMPACTION_SUMMARY_SUFFIX, m)]
      case 'system':
      case 'user':
      case 'assistant':
      case 'toolResult':
        return [m]
      default:
        return []
    }
  })
}
