// Real database servers for the store specs, the benchmark and the soak script: a PostgreSQL
// (Debian's postgresql 15, initdb + pg_ctl in a temp dir) and a Redis (redis-server), each on a
// free port of 127.0.0.1, stopped by `stop()`. A missing server is an error, never a skip.
import { execFileSync, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

const PG_BIN = process.env.CF_PG_BIN ?? '/usr/lib/postgresql/15/bin'

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.unref()
    s.on('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0
}

/** Runs a PostgreSQL binary, as the `postgres` system user when we are root (initdb refuses root). */
function pgRun(bin, args, options = {}) {
  const exe = join(PG_BIN, bin)
  if (!existsSync(exe)) throw new Error(`PostgreSQL is not installed (${exe} missing): apt-get install -y postgresql`)
  const [cmd, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', exe, ...args]] : [exe, args]
  return execFileSync(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], ...options })
}

/**
 * Starts a PostgreSQL server. Returns `{ url, port, restart(), stop() }`; `restart()` stops it
 * (fast: connections are cut) and starts it again on the same port and data. `durable: true`
 * keeps fsync on (the benchmark); the specs run without it.
 */
export async function startPostgres({ durable = false } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'cf-pg-'))
  if (isRoot()) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString())
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString())
    chownSync(dir, uid, gid)
  }
  const data = join(dir, 'data')
  pgRun('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'])
  const port = await freePort()
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=${durable ? 'on' : 'off'} -c max_connections=200`
  const start = () => pgRun('pg_ctl', ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-w', 'start'])
  const halt = () => pgRun('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'])
  start()
  let running = true
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async restart() {
      halt()
      start()
    },
    async stop() {
      if (running) {
        running = false
        try {
          halt()
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }
    },
  }
}

/** Starts a Redis server (append-only file synced at every write). Returns `{ url, port, restart(), stop() }`. */
export async function startRedis() {
  const dir = mkdtempSync(join(tmpdir(), 'cf-redis-'))
  const port = await freePort()
  const conf = join(dir, 'redis.conf')
  writeFileSync(conf, [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, 'appendonly yes', 'appendfsync always', 'save ""', 'daemonize no', 'protected-mode no'].join('\n') + '\n')
  let child
  const start = async () => {
    child = spawn('redis-server', [conf], { stdio: 'ignore' })
    const failed = new Promise((_, reject) =>
      child.once('error', (e) => reject(new Error(`redis-server could not start (apt-get install -y redis-server): ${e.message}`))),
    )
    for (let i = 0; i < 200; i++) {
      const up = await Promise.race([failed, ping(port)])
      if (up) return
      await sleep(25)
    }
    throw new Error('redis-server did not answer')
  }
  const halt = async () => {
    const c = child
    if (!c || c.exitCode !== null) return
    const exited = new Promise((r) => c.once('exit', r))
    c.kill('SIGTERM')
    await exited
  }
  await start()
  let running = true
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async restart() {
      await halt()
      await start()
    },
    async stop() {
      if (running) {
        running = false
        try {
          await halt()
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }
    },
  }
}

/** True when something answers PING on the port. */
function ping(port) {
  return new Promise((resolve) => {
    import('node:net').then(({ connect }) => {
      const s = connect(port, '127.0.0.1')
      s.once('error', () => resolve(false))
      s.once('connect', () => s.write('PING\r\n'))
      s.once('data', (d) => {
        s.destroy()
        resolve(d.toString().startsWith('+PONG'))
      })
    })
  })
}
