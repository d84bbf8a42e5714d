// `contextfold view <file>`: a page of the session (the context now, the timeline, every
// compaction opened, the messages), served on 127.0.0.1 until Ctrl-C, or written by `--out` as one
// self-contained file. Its figures are `inspect`'s: the page is drawn from `inspectReport()`.
import { spawn } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

import { InvalidArgumentError, type Command } from 'commander'

import { addCommonOptions, addOverheadOptions, addPriceOptions, countArg, version, type CommonFlags, type RunContext } from '../common.js'
import { CliError, EXIT, usageError } from '../errors.js'
import { int } from '../format.js'
import { inspectReport, type InspectFlags } from '../inspect.js'
import { print, printJson, writeFileAtomic } from '../output.js'
import { viewData } from './data.js'
import { renderPage } from './page.js'

export interface ViewFlags extends InspectFlags {
  port?: number
  open?: boolean
  out?: string
}

function portArg(value: string): number {
  const n = Number(value)
  if (!/^\d+$/.test(value.trim()) || n < 1 || n > 65_535) throw new InvalidArgumentError('expected a port number from 1 to 65535.')
  return n
}

/** The page for `file`: the report `inspect` makes, the session replayed over time, every message. */
export async function viewPage(file: string, flags: InspectFlags, ctx: RunContext): Promise<string> {
  const { report, context, session } = await inspectReport(file, flags, ctx)
  ctx.progress.update(`Replaying ${file} over time`)
  const data = viewData(report, session.messages(), new Set(context.map((m) => m.id)), session.timeline(), version())
  return renderPage(data)
}

/** Serves `page` on 127.0.0.1 (`port` 0: a free one); resolves once it listens. */
function serve(page: string, port: number): Promise<Server> {
  const body = Buffer.from(page)
  const server = createServer((req, res) => {
    // Only this machine's own names: a page on another site cannot reach it by rebinding DNS.
    const host = (req.headers.host ?? '').replace(/:\d+$/, '')
    if (host !== '127.0.0.1' && host !== 'localhost') {
      res.writeHead(403, { 'content-type': 'text/plain' }).end('forbidden')
      return
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed')
      return
    }
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
    if (path !== '/' && path !== '/index.html') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
      return
    }
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': body.length,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    })
    res.end(req.method === 'HEAD' ? undefined : body)
  })
  return new Promise((ok, fail) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      const why = e.code === 'EADDRINUSE' ? `port ${port} of 127.0.0.1 is in use: choose another with --port, or leave --port out for a free one` : `cannot serve on 127.0.0.1:${port}: ${e.message}`
      fail(new CliError(EXIT.FAILURE, 'CF_IO', why, { cause: e }))
    })
    server.listen(port, '127.0.0.1', () => ok(server))
  })
}

/** Opens `target` in the default browser; says so on stderr when it cannot. */
function openBrowser(target: string): void {
  const [cmd, args] =
    process.platform === 'darwin' ? ['open', [target]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '""', target]] : ['xdg-open', [target]]
  const warn = (why: string) => process.stderr.write(`contextfold: could not open a browser (${cmd}: ${why}); open ${target} yourself\n`)
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true })
    child.on('error', (e) => warn(e.message))
    child.unref()
  } catch (e) {
    warn((e as Error).message)
  }
}

function size(bytes: number): string {
  return bytes >= 1_048_576 ? `${(bytes / 1_048_576).toFixed(1)} MB` : `${int(Math.ceil(bytes / 1024))} KB`
}

export function registerView(program: Command, run: (action: (ctx: RunContext) => Promise<void>, flags: CommonFlags) => Promise<void>): void {
  const cmd = program
    .command('view')
    .description(
      'a page of the session: the context now as a grid, the timeline of model calls with every prune and compaction, each compaction opened, the messages (searchable); served on 127.0.0.1, or written as one self-contained file with --out',
    )
    .argument('<file>', 'what inspect reads: a transcript, contextfold messages, a session store, or a postgres:// or redis:// URL with --session; - reads stdin')
    .option('--top <n>', 'how many of the largest tool outputs to list (default: 10)', countArg)
    .option('--port <n>', 'serve on this port of 127.0.0.1 (default: a free one)', portArg)
    .option('--open', 'open the page in the default browser')
    .option('-o, --out <file>', 'write the page to this file (self-contained: it loads nothing) instead of serving it')
  addPriceOptions(addOverheadOptions(addCommonOptions(cmd))).action(async (file: string, flags: ViewFlags) => {
    if (flags.out !== undefined && flags.port !== undefined) throw usageError('--port serves the page and --out writes it: give one of them')
    await run(async (ctx) => {
      const page = await viewPage(file, flags, ctx)
      ctx.progress.stop()
      if (flags.out !== undefined) {
        writeFileAtomic(flags.out, page)
        const bytes = Buffer.byteLength(page)
        if (ctx.json) printJson({ file, out: flags.out, bytes })
        else print(`${flags.out}: the page of ${file} (${size(bytes)}, self-contained)`)
        if (flags.open) openBrowser(pathToFileURL(resolve(flags.out)).href)
        return
      }
      const server = await serve(page, flags.port ?? 0)
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : flags.port
      const url = `http://127.0.0.1:${port}/`
      if (ctx.json) printJson({ file, url })
      else print(`${url}  the page of ${file} (Ctrl-C stops)`)
      if (flags.open) openBrowser(url)
      await new Promise<void>((done) => {
        if (ctx.signal.aborted) done()
        else ctx.signal.addEventListener('abort', () => done(), { once: true })
      })
      server.closeAllConnections()
      await new Promise<void>((done) => server.close(() => done()))
    }, flags)
  })
}
