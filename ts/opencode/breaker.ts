// The circuit breaker's thrash rule (AutoCompactor: `maxIneffective` compactions in a row that left the
// context over the limit stop automatic compaction), read from opencode's history. opencode compacts
// when the model's answer reports usage over the limit; a compaction followed by at most one answer
// and no request from the user, then another compaction, left the context over the limit.
import { isCompactionRequest, isUserRequest, type OpencodeMessage } from './messages.js'

/** How many compactions in a row, counting back from the newest one, were followed at once by another. */
export function ineffectiveCompactions(messages: readonly OpencodeMessage[]): number {
  const requests = messages.flatMap((m, i) => (isCompactionRequest(m) ? [i] : []))
  let count = 0
  for (let k = requests.length - 1; k > 0; k--) {
    const between = messages.slice(requests[k - 1]! + 1, requests[k])
    const answers = between.filter((m) => m.info.role === 'assistant' && m.info.summary !== true)
    if (between.some(isUserRequest) || answers.length > 1) break
    count++
  }
  return count
}

/** Why auto-continue is turned off after this compaction, or undefined to leave it on. */
export function thrashReason(messages: readonly OpencodeMessage[], maxIneffective: number): string | undefined {
  const n = ineffectiveCompactions(messages)
  if (n < maxIneffective) return undefined
  return (
    `contextfold: ${n} compactions in a row left the context over the limit (the model's next answer reported ` +
    `usage over it again): auto-continue turned off for this compaction, so the loop stops; send a message to go on`
  )
}
