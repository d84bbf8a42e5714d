// A writer process for the store specs and the soak script:
//   node store-writer.mjs <backend> <target> <session id> <first message number> [count]
// Opens the session (waiting while another writer holds it), appends messages from `first` on
// (forever, or `count` of them), and prints each id once `append` has resolved; every 25th message
// is followed by a compaction (request + completed summary) keeping the last few messages.
import { openLog } from '../dist/session-log.js'
import { openStore } from './backends.mjs'

const [backend, target, id, firstArg, countArg] = process.argv.slice(2)
const say = (line) => process.stdout.write(`${line}\n`)

const store = await openLog((sid) => openStore(backend, target, sid), id)
let n = Number(firstArg)
const end = countArg === undefined ? Infinity : n + Number(countArg)
for (; n < end; ) {
  const mid = `m${n}`
  const text = 'x'.repeat(20 + ((n * 7919) % 2_000))
  if (n % 2 === 0) {
    await store.append({ id: mid, role: 'user', parts: [{ type: 'text', id: `${mid}-t`, text }] })
  } else {
    await store.append({
      id: mid, role: 'assistant', finish: 'tool-calls', parentID: `m${n - 1}`,
      parts: [{ type: 'tool', id: `${mid}-t`, callID: `c${n}`, tool: 'bash', state: { status: 'completed', input: {}, output: text } }],
    })
  }
  say(mid)
  n++
  if (n % 25 === 0) {
    const req = `r${n}`
    await store.append({ id: req, role: 'user', parts: [{ type: 'compaction', id: `${req}-c`, auto: true, tailStartID: `m${n - 4}` }] })
    say(req)
    const sum = `s${n}`
    await store.append({ id: sum, role: 'assistant', parentID: req, summary: true, finish: 'stop', parts: [{ type: 'text', id: `${sum}-t`, text: `summary up to m${n - 4}` }] })
    say(sum)
  }
}
await store.close()
say('done')
