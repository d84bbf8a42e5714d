// One conformance spec for every session store: the file store, PostgreSQL and Redis, each against
// a real server this spec starts and stops. Round trips, tail-first loads equal to full loads on
// random sequences (fast-check), the second writer, a writer SIGKILLed mid-append, a server
// restart mid-run, and bad input (a foreign table or key, a corrupted entry).
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import fc from 'fast-check'
import pg from 'pg'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { Session, filterCompacted, type Message, type SessionOptions } from '../dist/index.js'
import { PostgresSession } from '../dist/postgres/index.js'
import { RedisSession, redisKeys } from '../dist/redis/index.js'
import { BACKENDS, TEST_LEASE_MS, openStore, startBackend } from './backends.mjs'
import { MODEL, assistant, completed, expectRejectCode, ids, request, summary, tool, user, words } from './helpers.js'

const OPTS: SessionOptions = { model: MODEL, tokenizer: 'estimate' }
const WRITER = join(__dirname, 'store-writer.mjs')

type Backend = (typeof BACKENDS)[number]
type Store = Awaited<ReturnType<typeof openStore>>

/** The stores' members, awaited (the file store's are synchronous). */
const loadAll = async (s: Store): Promise<Message[]> => await s.loadAll()
const load = async (s: Store, o: SessionOptions = OPTS): Promise<Session> => await s.load(o)

let sessionSeq = 0
const newId = () => `s${++sessionSeq}-${process.pid}`

describe.each(BACKENDS)('%s store', (backend: Backend) => {
  let server: Awaited<ReturnType<typeof startBackend>>
  beforeAll(async () => {
    server = await startBackend(backend)
  })
  afterAll(async () => {
    await server?.stop()
  })
  const open = (id: string, options: Record<string, unknown> = {}) => openStore(backend, server.target, id, options)

  it('round trip: appends, updates and prunes load back; loadAll, export, id, readOnly', async () => {
    const id = newId()
    const store = await open(id, { session: OPTS })
    const msgs: Message[] = []
    for (let i = 0; i < 6; i++) {
      msgs.push(user(`u${i}`, `question ${i}${words(40)}`))
      msgs.push(assistant(`a${i}`, [tool(`c${i}`, 'bash', completed(`out ${i}${words(200)}`), `t${i}`)], { finish: 'tool-calls', parentID: `u${i}` }))
    }
    msgs.push(request('r1', { tailStartID: 'u4' }), summary('s1', 'r1'), user('u9', 'after'))
    for (const m of msgs) await store.append(m)
    const edited = user('u9', 'after, edited')
    await store.update(edited)
    await store.prune({ compactedAt: 5, messageIDs: ['a5'], prunedPartIDs: ['t5'] })
    await expectRejectCode(Promise.resolve().then(() => store.append(user('u0'))), 'CF_DUPLICATE_ID')
    await expectRejectCode(Promise.resolve().then(() => store.update(user('nope'))), 'CF_NOT_FOUND')
    await expectRejectCode(Promise.resolve().then(() => store.prune({ compactedAt: 1, messageIDs: ['a5'], prunedPartIDs: [] })), 'CF_INVALID_ARGUMENT')

    const all = await loadAll(store)
    expect(ids(all)).toEqual(ids(msgs))
    expect(all.at(-1)).toEqual(edited)
    const pruned = all.find((m) => m.id === 'a5')!.parts[0] as { state: { compactedAt?: number } }
    expect(pruned.state.compactedAt).toBe(5)
    const live = Session.fromMessages(all, OPTS)
    const loaded = await load(store)
    expect(loaded.context()).toEqual(live.context())
    expect(ids(loaded.context())).toEqual(['r1', 's1', 'u4', 'a4', 'u5', 'a5', 'u9'])
    // Tail-first: the hidden part was not read.
    expect(ids(loaded.messages())).not.toContain('u0')
    expect(store.id).toBeTruthy()
    await store.close()
    await store.close()
    await expectRejectCode(Promise.resolve().then(() => store.append(user('late'))), 'CF_STORE_CLOSED')

    const reader = await open(id, { readOnly: true })
    expect(ids(await loadAll(reader))).toEqual(ids(msgs))
    // Loads use the options the session was created with.
    expect((await reader.load()).context()).toEqual(live.context())
    await expectRejectCode(Promise.resolve().then(() => reader.append(user('x'))), 'CF_READ_ONLY')
    const out = join(server.target.startsWith('/') ? server.target : '/tmp', `${id}.export.jsonl`)
    expect(await reader.export(out)).toBe(msgs.length)
    expect(readFileSync(out, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l).id)).toEqual(ids(msgs))
    await reader.close()
    await expectRejectCode(Promise.resolve().then(() => open(newId(), { readOnly: true })), 'CF_SESSION_NOT_FOUND')
    await expectRejectCode(Promise.resolve().then(() => open(newId(), { create: false })), 'CF_SESSION_NOT_FOUND')
  })

  it('tail-first loads equal full loads on random appends, updates, prunes, full and partial compactions', async () => {
    type Op =
      | { k: 'user' | 'tools'; len: number }
      | { k: 'edit'; back: number }
      | { k: 'prune'; n: number }
      | { k: 'compact'; tail: number; hidden: number | null; finished: boolean }
      | { k: 'flip' }
      | { k: 'reopen' }
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 5, arbitrary: fc.record({ k: fc.constant('user' as const), len: fc.integer({ min: 1, max: 200 }) }) },
      { weight: 4, arbitrary: fc.record({ k: fc.constant('tools' as const), len: fc.integer({ min: 1, max: 800 }) }) },
      { weight: 2, arbitrary: fc.record({ k: fc.constant('edit' as const), back: fc.nat(10) }) },
      { weight: 1, arbitrary: fc.record({ k: fc.constant('prune' as const), n: fc.integer({ min: 1, max: 3 }) }) },
      {
        weight: 2,
        arbitrary: fc.record({ k: fc.constant('compact' as const), tail: fc.nat(12), hidden: fc.option(fc.nat(20)), finished: fc.boolean() }),
      },
      { weight: 1, arbitrary: fc.record({ k: fc.constant('flip' as const) }) },
      { weight: 1, arbitrary: fc.record({ k: fc.constant('reopen' as const) }) },
    )
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), async (ops) => {
        const id = newId()
        let store = await open(id, { session: OPTS })
        const model: Message[] = []
        let last: { id: string; parent: string; done: boolean } | undefined
        let n = 0
        try {
          for (const o of ops) {
            n++
            if (o.k === 'user') {
              const m = user(`u${n}`, words(o.len))
              await store.append(m)
              model.push(m)
            } else if (o.k === 'tools') {
              const m = assistant(`a${n}`, [tool(`c${n}`, 'bash', completed(words(o.len)), `t${n}`)], { finish: 'tool-calls' })
              await store.append(m)
              model.push(m)
            } else if (o.k === 'edit' && model.length) {
              const old = model[model.length - 1 - (o.back % model.length)]!
              if (old.summary || old.parts.some((p) => p.type === 'compaction')) continue
              const m = user(old.id, `edited ${n}`)
              await store.update(m)
              model[model.indexOf(old)] = m
            } else if (o.k === 'prune') {
              const rec = { compactedAt: n, messageIDs: [] as string[], prunedPartIDs: [] as string[] }
              for (const m of [...model].reverse()) {
                const p = m.parts[0] as { type: string; id: string; state?: { status: string; compactedAt?: number } }
                if (p?.type === 'tool' && p.state?.status === 'completed' && p.state.compactedAt === undefined && rec.messageIDs.length < o.n) {
                  p.state.compactedAt = n
                  rec.messageIDs.push(m.id)
                  rec.prunedPartIDs.push(p.id)
                }
              }
              await store.prune(rec)
            } else if (o.k === 'compact') {
              const len = model.length
              const tail = o.tail === 0 ? undefined : o.tail > len ? 'missing' : model[len - o.tail]!.id
              const hidden = o.hidden === null ? undefined : o.hidden >= len ? 'missing' : model[o.hidden]!.id
              const r = request(`r${n}`, { tailStartID: tail, hiddenFromID: hidden })
              const s = summary(`s${n}`, r.id, { finish: o.finished ? 'stop' : null })
              await store.append(r)
              await store.append(s)
              model.push(r, s)
              last = { id: s.id, parent: r.id, done: o.finished }
            } else if (o.k === 'flip' && last) {
              last.done = !last.done
              const s = summary(last.id, last.parent, { finish: last.done ? 'stop' : null })
              await store.update(s)
              model[model.findIndex((m) => m.id === s.id)] = s
            } else if (o.k === 'reopen') {
              await store.close()
              store = await open(id)
            }
          }
          const all = await loadAll(store)
          expect(all).toEqual(model)
          const tailFirst = await load(store)
          expect(ids(tailFirst.context())).toEqual(ids(filterCompacted(all)))
          expect(tailFirst.context()).toEqual(Session.fromMessages(all, OPTS).context())
          expect(tailFirst.usage()).toEqual(Session.fromMessages(all, OPTS).usage())
        } finally {
          await store.close()
        }
      }),
      { numRuns: 25, seed: 20261127 },
    )
  })

  it('a second writer gets CF_SESSION_LOCKED, in this process and in another; readers are never refused', async () => {
    const id = newId()
    const first = await open(id, { session: OPTS })
    await first.append(user('u1'))
    await expectRejectCode(Promise.resolve().then(() => open(id)), 'CF_SESSION_LOCKED')
    // Another process: it waits for the session (openLog), so it gets it once this one closes.
    const child = startWriter(backend, server.target, id, 1_000_000, 3)
    const reader = await open(id, { readOnly: true })
    expect(ids(await loadAll(reader))).toEqual(['u1'])
    await reader.close()
    expect([...child.lines]).toEqual([])
    await first.close()
    await child.exited
    expect([...child.lines]).toEqual(['m1000000', 'm1000001', 'm1000002', 'done'])
  })

  it('a writer that lost its lock (connection cut, lease gone) and was taken over gets CF_SESSION_LOCKED, and writes nothing', async () => {
    if (backend === 'file') return // the OS lock lives as long as the process
    const id = newId()
    const first = await open(id, { session: OPTS })
    await first.append(user('u1'))
    await cutLock(backend, server.target, id)
    const second = await open(id)
    await second.append(user('u2'))
    await expectRejectCode(Promise.resolve().then(() => first.append(user('u3'))), 'CF_SESSION_LOCKED')
    await second.append(user('u4'))
    expect(ids(await loadAll(second))).toEqual(['u1', 'u2', 'u4'])
    await second.close()
    await first.close()
  })

  it('SIGKILL of a writer mid-append: every acknowledged entry is there once, and the next writer gets the session', async () => {
    const id = newId()
    await (await open(id, { session: OPTS })).close()
    let acknowledged: string[] = []
    let next = 0
    for (let k = 0; k < 6; k++) {
      const c = startWriter(backend, server.target, id, next)
      await c.lines.wait(5 + k * 7)
      c.child.kill('SIGKILL')
      await c.exited
      acknowledged = acknowledged.concat(c.lines.filter((l) => l !== 'done'))
      // The next writer gets the session (Redis: once the killed writer's lease has run out).
      const started = Date.now()
      const store = await openWhenFree(() => open(id))
      if (backend !== 'redis') expect(Date.now() - started).toBeLessThan(TEST_LEASE_MS)
      const all = await loadAll(store)
      const stored = ids(all)
      expect(new Set(stored).size).toBe(stored.length)
      const acked = new Set(acknowledged)
      expect(stored.filter((s) => acked.has(s))).toEqual(acknowledged)
      expect(ids((await load(store)).context())).toEqual(ids(filterCompacted(all)))
      await store.close()
      const numbers = stored.filter((s) => /^m\d+$/.test(s)).map((s) => Number(s.slice(1)))
      next = numbers.length ? Math.max(...numbers) + 1 : 0
    }
    expect(acknowledged.length).toBeGreaterThan(6)
  })

  it('a server restart mid-run: writes go on (retried, or a coded error the caller retries), nothing duplicated or lost', async () => {
    const id = newId()
    const store = await open(id, { session: OPTS })
    const written: string[] = []
    const codes = new Set<string>()
    for (let i = 0; i < 40; i++) {
      if (i === 20) {
        await server.restart()
        // Reads go on too (on a new connection).
        expect(ids(await loadAll(store))).toEqual(written)
      }
      const m = i % 2 ? assistant(`a${i}`, [tool(`c${i}`, 'bash', completed(words(30)))], { finish: 'tool-calls' }) : user(`u${i}`)
      for (let attempt = 0; ; attempt++) {
        try {
          await store.append(m)
          break
        } catch (e) {
          const code = (e as { code?: string }).code ?? 'uncoded'
          codes.add(code)
          expect(['CF_IO', 'CF_DUPLICATE_ID']).toContain(code)
          // An append whose acknowledgment was lost may already be there.
          if (code === 'CF_DUPLICATE_ID' || attempt > 50) break
          await new Promise((r) => setTimeout(r, 100))
        }
      }
      written.push(m.id)
    }
    const all = await loadAll(store)
    expect(ids(all)).toEqual(written)
    await store.close()
    expect([...codes].every((c) => c === 'CF_IO' || c === 'CF_DUPLICATE_ID')).toBe(true)
  })

  it('bad input: a corrupted entry is CF_CORRUPT_SESSION and loses nothing else; a foreign table or key is CF_STORE_SETUP', async () => {
    const good = newId()
    const bad = newId()
    for (const id of [good, bad]) {
      const s = await open(id, { session: OPTS })
      await s.append(user('u1'))
      await s.append(user('u2'))
      await s.close()
    }
    await corrupt(backend, server.target, bad, 3, '{"type":"message","message":{"id":"u2","role":"user","parts":[{"type":"text"')
    const reader = await open(bad, { readOnly: true })
    const e = await expectRejectCode(Promise.resolve().then(() => loadAll(reader)), 'CF_CORRUPT_SESSION')
    expect(e.message).toMatch(/line 3|entry 3/)
    await expectRejectCode(Promise.resolve().then(() => load(reader)), 'CF_CORRUPT_SESSION')
    await reader.close()
    const other = await open(good, { readOnly: true })
    expect(ids(await loadAll(other))).toEqual(['u1', 'u2'])
    await other.close()
    if (backend === 'file') return
    await foreign(backend, server.target)
  })
})

describe('drivers load only when used', () => {
  it("import 'contextfold' and its database subpaths load neither pg nor ioredis until a store connects", () => {
    const probe = (body: string) =>
      spawnSync(process.execPath, ['--input-type=module', '-e', `
        import { createRequire } from 'node:module'
        await import('contextfold'); await import('contextfold/postgres'); await import('contextfold/redis')
        ${body}
        const cache = createRequire(import.meta.url).cache
        console.log(JSON.stringify(['pg', 'ioredis'].filter((d) => Object.keys(cache).some((k) => k.includes('/node_modules/' + d + '/')))))`], {
        encoding: 'utf8',
        cwd: join(__dirname, '..'),
      })
    const idle = probe('')
    expect(JSON.parse(idle.stdout), idle.stderr).toEqual([])
    // The same probe sees a driver once a store needs it (the check can fail).
    const used = probe(`const { PostgresSession } = await import('contextfold/postgres'); await PostgresSession.open({ connectionString: 'postgres://127.0.0.1:1/x', id: 'x' }).catch(() => {})`)
    expect(JSON.parse(used.stdout), used.stderr).toEqual(['pg'])
  })
})

describe.each(['postgres', 'redis'] as const)('the CLI on a %s session', (backend) => {
  let server: Awaited<ReturnType<typeof startBackend>>
  beforeAll(async () => {
    server = await startBackend(backend)
  })
  afterAll(async () => {
    await server?.stop()
  })
  const cli = (...args: string[]) => spawnSync(process.execPath, [join(__dirname, '..', 'dist', 'cli.js'), ...args], { encoding: 'utf8' })

  it('migrate is idempotent; inspect, compact and convert read a session by URL and --session as they read its file', async () => {
    for (let i = 0; i < 2; i++) expect(cli('migrate', server.target).status).toBe(0)
    const id = newId()
    const store = await openStore(backend, server.target, id, { session: { ...OPTS, model: { ...MODEL, limit: { context: 8_000, output: 1_000 } } } })
    for (let i = 0; i < 8; i++) {
      await store.append(user(`u${i}`, `question ${i}${words(300)}`))
      await store.append(assistant(`a${i}`, [tool(`c${i}`, 'bash', completed(`out ${i}${words(400)}`))], { finish: 'tool-calls', parentID: `u${i}` }))
    }
    const file = join(tmpdir(), `${id}.jsonl`)
    await store.export(file)
    await store.close()
    const db = ['--session', id, '--context', '8000', '--output', '1000']
    const fromDb = JSON.parse(cli('inspect', server.target, ...db, '--json').stdout)
    const fromFile = JSON.parse(cli('inspect', file, '--context', '8000', '--output', '1000', '--json').stdout)
    // The same report (the database's header also names the model, which a plain messages file cannot).
    const figures = (r: Record<string, unknown>) => ({ ...r, file: '', format: '', options: undefined })
    expect(figures(fromDb)).toEqual(figures(fromFile))
    expect(fromDb.messages.total).toBe(16)
    const converted = cli('convert', server.target, ...db, '--to', 'contextfold')
    expect(converted.status, converted.stderr).toBe(0)
    expect(converted.stdout).toBe(readFileSync(file, 'utf8'))
    const compacted = cli('compact', server.target, ...db, '--json')
    expect(compacted.status, compacted.stderr).toBe(0)
    expect(JSON.parse(compacted.stdout)).toMatchObject({ status: 'compacted' })
    rmSync(file, { force: true })
    // A missing session or id, and a database without the layout, are said plainly.
    const missing = cli('inspect', server.target, '--session', 'nope')
    expect([missing.status, missing.stderr]).toEqual([3, expect.stringContaining('no such session')])
    expect(cli('inspect', server.target).status).toBe(2)
    const other = backend === 'postgres' ? ['--table', 'never_set_up'] : ['--prefix', 'never:']
    const unset = cli('inspect', server.target, '--session', id, ...other)
    expect(unset.stderr).toMatch(/setup|migrate/)
  })
})

/** What a network cut does to a writer's lock: PostgreSQL ends its connection; Redis lets its lease go. */
async function cutLock(backend: Backend, target: string, id: string): Promise<void> {
  if (backend === 'postgres') {
    const client = new pg.Client({ connectionString: target })
    await client.connect()
    await client.query(`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()`)
    await client.end()
  } else {
    const client = new Redis(target)
    await client.del(redisKeys(id).lease)
    client.disconnect()
  }
}

/** Overwrites entry `n` of session `id` with `text`, behind the store's back. */
async function corrupt(backend: Backend, target: string, id: string, n: number, text: string): Promise<void> {
  if (backend === 'file') {
    const { readFileSync: read, writeFileSync } = await import('node:fs')
    const path = join(target, `${id}.jsonl`)
    const lines = read(path, 'utf8').split('\n')
    lines[n - 1] = text
    writeFileSync(path, lines.join('\n'))
  } else if (backend === 'postgres') {
    const client = new pg.Client({ connectionString: target })
    await client.connect()
    await client.query('UPDATE contextfold_entries SET entry = $3 WHERE session_id = $1 AND seq = $2', [id, n, text])
    await client.end()
  } else {
    const client = new Redis(target)
    await client.lset(redisKeys(id).log, n - 1, text)
    client.disconnect()
  }
}

/** Another application's table or keys where contextfold's would be: coded errors, their data untouched. */
async function foreign(backend: Backend, target: string): Promise<void> {
  if (backend === 'postgres') {
    const client = new pg.Client({ connectionString: target })
    await client.connect()
    await client.query('CREATE TABLE app_entries (id serial primary key, body text)')
    await client.query(`INSERT INTO app_entries (body) VALUES ('theirs')`)
    const opts = { connectionString: target, table: 'app_entries' }
    await expectRejectCode(PostgresSession.open({ ...opts, id: 'x' }), 'CF_STORE_SETUP')
    await expectRejectCode(PostgresSession.setup(opts), 'CF_STORE_SETUP')
    expect((await client.query('SELECT body FROM app_entries')).rows).toEqual([{ body: 'theirs' }])
    await client.end()
  } else {
    const client = new Redis(target)
    await client.hset('app:layout', 'x', '1')
    await expectRejectCode(RedisSession.open({ url: target, prefix: 'app:', id: 'x' }), 'CF_STORE_SETUP')
    await expectRejectCode(RedisSession.setup({ url: target, prefix: 'app:' }), 'CF_STORE_SETUP')
    // A session key of another type under our prefix.
    await client.set(redisKeys('taken').log, 'not a list')
    await expectRejectCode(RedisSession.open({ url: target, id: 'taken' }), 'CF_STORE_SETUP')
    expect(await client.get(redisKeys('taken').log)).toBe('not a list')
    expect(await client.hget('app:layout', 'x')).toBe('1')
    client.disconnect()
  }
}

/** `open()`, retried while another writer (or a dead writer's unexpired lease) holds the session. */
async function openWhenFree(open: () => Promise<Store>): Promise<Store> {
  for (let i = 0; ; i++) {
    try {
      return await open()
    } catch (e) {
      if ((e as { code?: string }).code !== 'CF_SESSION_LOCKED' || i > 100) throw e
      await new Promise((r) => setTimeout(r, 50))
    }
  }
}

/** Starts store-writer.mjs; `lines` collects its complete output lines (`lines.wait(n)` waits for n). */
function startWriter(backend: Backend, target: string, id: string, first: number, count?: number) {
  const args = [WRITER, backend, target, id, String(first), ...(count === undefined ? [] : [String(count)])]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const lines = Object.assign([] as string[], {
    wait: (n: number) =>
      new Promise<void>((resolve, reject) => {
        const check = () => (lines.length >= n ? resolve() : child.exitCode !== null ? reject(new Error(`writer exited: ${stderr}`)) : setTimeout(check, 5))
        check()
      }),
  })
  let partial = ''
  let stderr = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n')
    partial = parts.pop() ?? ''
    lines.push(...parts)
  })
  child.stderr.on('data', (c) => (stderr += c))
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()))
  return { child, lines, exited }
}
