// The session stores side by side: the file store, PostgreSQL and Redis (real local servers this
// script starts and stops, as the specs do). For sessions of 1k, 10k and 100k messages, compacted
// every 200 messages: append latency (p50 / p99 of 1,000 appends on the long session, after its
// first write; each synced to disk), the first write after opening (the writer reads the log's structure once), and
// the time to load the context from a fresh open (tail-first) next to reading every message.
// Run: node benchmark/stores.mjs [sizes, default 1000,10000,100000] [backends, default file,postgres,redis]
//   (a Markdown table on stderr, one JSON result on stdout).

import { Redis } from 'ioredis'
import pg from 'pg'

import { BACKENDS, openStore, startBackend } from '../__test__/backends.mjs'
import { isMain, log, median, msSince, now } from './timing.mjs'

const OPTIONS = { model: { providerID: 'anthropic', modelID: 'claude-sonnet-4-5', limit: { context: 200_000, output: 64_000 } }, tokenizer: 'estimate' }
const MEASURED = 1_000
const COMPACT_EVERY = 200
const LOADS = 5

/** Message `n` of the synthetic conversation: a question, or a tool call with ~1 KB of output. */
function message(n) {
  const id = `m${n}`
  if (n % 2 === 0) return { id, role: 'user', parts: [{ type: 'text', id: `${id}-t`, text: `step ${n}: look at module ${n % 97} and report` }] }
  return {
    id, role: 'assistant', finish: 'tool-calls', parentID: `m${n - 1}`,
    parts: [{ type: 'tool', id: `${id}-t`, callID: `c${n}`, tool: 'read', state: { status: 'completed', input: { path: `src/m${n}.ts` }, output: `export const v${n} = ${n}\n`.repeat(40) } }],
  }
}

/** Appends messages `from` to `to - 1`, with a compaction (request + summary keeping the last 20) every `COMPACT_EVERY`. */
async function fill(store, from, to, latencies) {
  for (let n = from; n < to; n++) {
    const t0 = now()
    await store.append(message(n))
    latencies?.push(msSince(t0))
    if ((n + 1) % COMPACT_EVERY === 0) {
      await store.append({ id: `r${n}`, role: 'user', parts: [{ type: 'compaction', id: `r${n}-c`, auto: true, tailStartID: `m${n - 19}` }] })
      await store.append({ id: `s${n}`, role: 'assistant', parentID: `r${n}`, summary: true, finish: 'stop', parts: [{ type: 'text', id: `s${n}-t`, text: `summary up to m${n - 20}` }] })
    }
  }
}

const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]

/**
 * Filling a long session is setup, not what is measured: it runs with syncing relaxed (the file
 * store's batch durability, PostgreSQL's synchronous_commit off, Redis's appendfsync no); every
 * measured append syncs (the file store's default, PostgreSQL commits, Redis appendfsync always).
 */
async function relaxed(backend, target, on) {
  if (backend === 'postgres') {
    const client = new pg.Client({ connectionString: target })
    await client.connect()
    await client.query(on ? 'ALTER ROLE postgres SET synchronous_commit = off' : 'ALTER ROLE postgres RESET synchronous_commit')
    await client.end()
  } else if (backend === 'redis') {
    const client = new Redis(target)
    await client.config('SET', 'appendfsync', on ? 'no' : 'always')
    client.disconnect()
  }
}

async function measure(backend, target, size) {
  const id = `bench-${size}`
  await relaxed(backend, target, true)
  const writer = await openStore(backend, target, id, backend === 'file' ? { session: OPTIONS, durability: 'batch' } : { session: OPTIONS })
  await fill(writer, 0, size - MEASURED)
  await writer.close()
  await relaxed(backend, target, false)
  const store = await openStore(backend, target, id, {})
  let t0 = now()
  await fill(store, size - MEASURED, size - MEASURED + 1)
  const firstWrite = msSince(t0)
  const latencies = []
  await fill(store, size - MEASURED + 1, size, latencies)
  await store.close()
  // Loads first, each from a fresh open; then full reads (whose garbage would otherwise be
  // collected during the next load).
  const loads = []
  const fulls = []
  let context = 0
  for (const full of [false, true]) {
    for (let i = 0; i < LOADS; i++) {
      const reader = await openStore(backend, target, id, { readOnly: true })
      t0 = now()
      if (full) await reader.loadAll()
      else context = (await reader.load()).context().length
      ;(full ? fulls : loads).push(msSince(t0))
      await reader.close()
    }
  }
  return { backend, size, p50: percentile(latencies, 50), p99: percentile(latencies, 99), firstWrite, load: median(loads), loadAll: median(fulls), context }
}

export async function run(sizes, backends = BACKENDS) {
  const results = []
  for (const backend of backends) {
    const server = await startBackend(backend, { durable: true })
    try {
      for (const size of sizes) {
        log(`${backend}: ${size} messages...`)
        results.push(await measure(backend, server.target, size))
      }
    } finally {
      await server.stop()
    }
  }
  return results
}

export function table(results) {
  const f = (ms) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(0))
  const rows = results.map((r) => `| ${r.backend} | ${r.size.toLocaleString('en-US')} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.firstWrite)} | ${f(r.load)} (${r.context} msgs) | ${f(r.loadAll)} |`)
  return ['| store | messages | append p50 ms | append p99 ms | first write after open ms | load() after compaction ms | loadAll() ms |', '|---|---:|---:|---:|---:|---:|---:|', ...rows].join('\n')
}

if (isMain(import.meta.url)) {
  const sizes = (process.argv[2] ?? '1000,10000,100000').split(',').map(Number)
  const results = await run(sizes, process.argv[3]?.split(','))
  log('\n' + table(results))
  console.log(JSON.stringify(results))
}
