// A second process for the store specs: `node store-child.mjs <mode> <path> [first]`.
//   lock   — tries to open the file for writing, prints `opened` or the error code, exits
//   hold   — opens it for writing, prints `held`, then waits (the parent kills it)
//   append — opens it for writing (durability 'entry') and appends forever from message number
//            `first`, printing each id once `append` has returned; every 25th message is followed
//            by a compaction (request + completed summary) keeping the last few messages
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { SessionFile } = require('../native.js')

const [mode, path, firstArg] = process.argv.slice(2)
const say = (line) => process.stdout.write(`${line}\n`)

if (mode === 'lock') {
  try {
    SessionFile.open(path).close()
    say('opened')
  } catch (e) {
    say(e.code ?? String(e))
  }
  process.exit(0)
}

if (mode === 'hold') {
  SessionFile.open(path)
  say('held')
  setInterval(() => {}, 1 << 30)
}

if (mode === 'append') {
  const store = SessionFile.open(path, { durability: 'entry' })
  let n = Number(firstArg)
  let seed = n * 7919 + 1
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed / 2147483648
  }
  for (;;) {
    const id = `m${n}`
    // Mostly small messages, now and then a large one (a longer write to be cut short).
    const size = rand() < 0.03 ? 20_000 + Math.floor(rand() * 100_000) : 20 + Math.floor(rand() * 2_000)
    const text = 'x'.repeat(size)
    if (n % 2 === 0) {
      store.append({ id, role: 'user', parts: [{ type: 'text', id: `${id}-t`, text }] })
    } else {
      store.append({
        id, role: 'assistant', finish: 'tool-calls', parentID: `m${n - 1}`,
        parts: [{ type: 'tool', id: `${id}-t`, callID: `c${n}`, tool: 'bash', state: { status: 'completed', input: {}, output: text } }],
      })
    }
    say(id)
    n++
    if (n % 25 === 0) {
      const req = `r${n}`
      store.append({ id: req, role: 'user', parts: [{ type: 'compaction', id: `${req}-c`, auto: true, tailStartID: `m${n - 4}` }] })
      say(req)
      const sum = `s${n}`
      store.append({ id: sum, role: 'assistant', parentID: req, summary: true, finish: 'stop', parts: [{ type: 'text', id: `${sum}-t`, text: `summary up to m${n - 4}` }] })
      say(sum)
    }
  }
}
