// Soak: 8 worker processes write 1,000 sessions, 100 appends each (a compaction every 25), on one
// store backend; one worker is killed with SIGKILL midway and restarted. Then every session is
// read back: every acknowledged entry present exactly once, every session complete (m0..m99,
// each once, in order), and its tail-first load equal to a full load.
// Run: node benchmark/soak.mjs [postgres|redis|file ...] [--sessions N] [--appends N] [--workers N]
// (default: postgres and redis; a script, not a test: it prints a report and exits 1 on a failure).
import { fork } from 'node:child_process'

import { filterCompacted } from '../dist/index.js'
import { openLog } from '../dist/session-log.js'
import { openStore, startBackend } from '../__test__/backends.mjs'
import { log, msSince, now } from './timing.mjs'

const args = process.argv.slice(2)
const flag = (name, dflt) => {
  const i = args.indexOf(`--${name}`)
  return i < 0 ? dflt : Number(args.splice(i, 2)[1])
}
const SESSIONS = flag('sessions', 1_000)
const APPENDS = flag('appends', 100)
const WORKERS = flag('workers', 8)
const OPTIONS = { model: { providerID: 'x', modelID: 'y', limit: { context: 200_000, output: 8_000 } }, tokenizer: 'estimate' }

/** Message `n` of a session, and what follows it (a compaction every 25 messages). */
function entries(n) {
  const id = `m${n}`
  const m =
    n % 2 === 0
      ? { id, role: 'user', parts: [{ type: 'text', id: `${id}-t`, text: `question ${n}` }] }
      : { id, role: 'assistant', finish: 'tool-calls', parts: [{ type: 'tool', id: `${id}-t`, callID: `c${n}`, tool: 'read', state: { status: 'completed', input: {}, output: 'x'.repeat(200 + n) } }] }
  if ((n + 1) % 25 !== 0) return [m]
  return [
    m,
    { id: `r${n}`, role: 'user', parts: [{ type: 'compaction', id: `r${n}-c`, auto: true, tailStartID: `m${n - 5}` }] },
    { id: `s${n}`, role: 'assistant', parentID: `r${n}`, summary: true, finish: 'stop', parts: [{ type: 'text', id: `s${n}-t`, text: `summary up to m${n - 6}` }] },
  ]
}

/** A worker: its sessions (`k % workers == w`), each opened, appended to up to APPENDS messages, closed; resumes from what is stored. */
async function worker(backend, target, w) {
  for (let k = w; k < SESSIONS; k += WORKERS) {
    const sid = `soak-${k}`
    const store = await openLog((id) => openStore(backend, target, id, { session: OPTIONS }), sid)
    const have = new Set((await store.loadAll()).map((m) => m.id))
    for (let n = 0; n < APPENDS; n++) {
      for (const m of entries(n)) {
        if (have.has(m.id)) continue
        await store.append(m)
        process.send({ ack: `${sid}/${m.id}` })
      }
    }
    await store.close()
  }
  process.send({ done: true })
}

function start(backend, target, w) {
  const child = fork(new URL(import.meta.url).pathname, ['--worker', backend, target, String(w), '--sessions', String(SESSIONS), '--appends', String(APPENDS), '--workers', String(WORKERS)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  return child
}

async function soak(backend) {
  const server = await startBackend(backend)
  const acked = new Map()
  const t0 = now()
  const failures = []
  try {
    let total = 0
    const expected = SESSIONS * (APPENDS + 2 * Math.floor(APPENDS / 25))
    let killedAt = -1
    await new Promise((resolve, reject) => {
      let done = 0
      const victim = 3 % WORKERS
      const watch = (child, w) => {
        child.on('message', (msg) => {
          if (msg.ack) {
            acked.set(msg.ack, (acked.get(msg.ack) ?? 0) + 1)
            total++
            if (killedAt < 0 && w === victim && total >= expected / 2) {
              killedAt = total
              child.kill('SIGKILL')
              child.once('exit', () => watch(start(backend, server.target, w), w))
            }
          }
          if (msg.done && ++done === WORKERS) resolve()
        })
        child.on('exit', (code, signal) => {
          if (code && !signal) reject(new Error(`worker ${w} exited with ${code}`))
        })
      }
      for (let w = 0; w < WORKERS; w++) watch(start(backend, server.target, w), w)
    })
    const wrote = msSince(t0)
    // Read every session back.
    let entriesSeen = 0
    let unacknowledged = 0
    const stored = new Set()
    for (let k = 0; k < SESSIONS; k++) {
      const sid = `soak-${k}`
      const store = await openStore(backend, server.target, sid, { readOnly: true })
      const all = await store.loadAll()
      const ids = all.map((m) => m.id)
      entriesSeen += ids.length
      const want = Array.from({ length: APPENDS }, (_, n) => entries(n).map((m) => m.id)).flat()
      if (JSON.stringify(ids) !== JSON.stringify(want)) failures.push(`${sid}: ${ids.length} entries, not the ${want.length} expected in order`)
      // Written by the killed worker but not acknowledged before it died: allowed, and counted.
      for (const id of ids) {
        stored.add(`${sid}/${id}`)
        if (!acked.has(`${sid}/${id}`)) unacknowledged++
      }
      const context = (await store.load()).context().map((m) => m.id)
      if (JSON.stringify(context) !== JSON.stringify(filterCompacted(all).map((m) => m.id))) failures.push(`${sid}: tail-first load differs from the full load`)
      await store.close()
    }
    for (const [key, times] of acked) {
      if (times !== 1) failures.push(`${key}: acknowledged ${times} times`)
      if (!stored.has(key)) failures.push(`${key}: acknowledged, not stored`)
    }
    return { backend, sessions: SESSIONS, appends: total, killedAt, seconds: wrote / 1000, entriesSeen, unacknowledged, failures: failures.slice(0, 20), failed: failures.length }
  } finally {
    await server.stop()
  }
}

if (args[0] === '--worker') {
  const [, backend, target, w] = args
  await worker(backend, target, Number(w))
  process.exit(0)
} else {
  const backends = args.length ? args : ['postgres', 'redis']
  let failed = 0
  for (const backend of backends) {
    log(`soak on ${backend}: ${WORKERS} workers, ${SESSIONS} sessions, ${APPENDS} appends each...`)
    const r = await soak(backend)
    failed += r.failed
    log(
      `${backend}: ${r.appends} acknowledged entries in ${r.seconds.toFixed(1)} s (worker killed at entry ${r.killedAt} and restarted); ` +
        `${r.entriesSeen} stored (${r.unacknowledged} written but not acknowledged before the kill), ${r.failed} failures${r.failed ? ': ' + r.failures.join('; ') : ''}`,
    )
    console.log(JSON.stringify(r))
  }
  process.exit(failed ? 1 : 0)
}
