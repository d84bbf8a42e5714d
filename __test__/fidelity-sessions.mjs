// Generated coding sessions with planted facts, compacted three times in a 48k window: what the
// fidelity spec asserts and `benchmark/fidelity.mjs` reports. Deterministic (seeded): four session
// shapes (a TypeScript API, a Python pipeline, a Go proxy, a Rust CLI) of 170–390 messages, each
// followed by two later phases; the first part is compacted, then each later phase is appended and
// compacted in turn. Facts planted: modified files, the latest request, ticket ids, commit shas,
// the last error (inside a test runner's report, as runners print it), the user's constraints and
// the decisions the user and the agent stated.
import { Session, compact } from '../dist/index.js'
import { extractiveSummary } from '../dist/summarizers/extractive.js'
import { rng } from '../benchmark/corpus-text.mjs'

/** The window every session is compacted in (usable: 48,000 − 8,000). */
const MODEL = { providerID: 'fidelity', modelID: 'fidelity-48k', limit: { context: 48_000, output: 8_000 } }

export const FACT_KINDS = ['modifiedFile', 'readFile', 'request', 'ticket', 'sha', 'error', 'constraint', 'decision', 'pin']

/** A pinned text, pinned after the first part. */
const PIN = 'Production deploys go through the staging cluster first.'

export const COMPACTIONS = 3

const pick = (random, list) => list[Math.floor(random() * list.length)]
const hex = (random, n) => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join('')
/** A commit sha (with a digit and a letter, as the identifier scan wants it). */
const sha = (random) => {
  for (;;) {
    const s = hex(random, 10)
    if (/\d/.test(s) && /[a-f]/.test(s)) return s
  }
}

// What each kind of project reads, runs and prints. `test` is the failing run's report: runner noise
// (progress, counts, banners, stack frames) around the one line a user would quote.
const SHAPES = [
  {
    name: 'ts-api',
    messages: 170,
    dirs: ['src/routes', 'src/repo', 'src/lib', 'test/routes'],
    ext: 'ts',
    words: ['tenant', 'user', 'invoice', 'session', 'audit', 'webhook'],
    testCommand: 'npx vitest run test/routes',
    line: (r, w, i) => pick(r, [
      `export async function ${w}Handler${i}(req: Request, res: Response): Promise<void> {`,
      `  const ${w} = await repo.${w}s.findById(req.params.id)`,
      `  if (!${w}) return res.status(404).json({ error: 'not found' })`,
      `  res.json({ data: serialize${w[0].toUpperCase()}${w.slice(1)}(${w}) })`,
      `import { ${w}Schema } from '../schemas/${w}.js'`,
      '}',
    ]),
    pass: (file) => ` RUN  v2.1.8 /home/dev/api\n\n ✓ ${file} (15 tests) 388ms\n\n Test Files  1 passed (1)\n      Tests  15 passed (15)\n   Duration  1.61s\n\nExit code: 0`,
    fail: (file, error) =>
      [
        ' RUN  v2.1.8 /home/dev/api',
        '',
        ' ✓ test/routes/health.test.ts (3 tests) 12ms',
        ` ❯ ${file} (15 tests | 1 failed) 412ms`,
        '   × POST /users > rejects a duplicate email 38ms',
        `     → ${error}`,
        '',
        '⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯',
        '',
        ` FAIL  ${file} > POST /users > rejects a duplicate email`,
        `error: ${error}`,
        ' ❯ Parser.parseErrorMessage node_modules/pg-protocol/src/parser.ts:369:69',
        ' ❯ Parser.handlePacket node_modules/pg-protocol/src/parser.ts:188:21',
        '',
        ' Test Files  1 failed | 1 passed (2)',
        '      Tests  1 failed | 17 passed (18)',
        '   Duration  1.82s',
        '',
        'Exit code: 1',
      ].join('\n'),
    errors: [
      'duplicate key value violates unique constraint "users_email_key"',
      "TypeError: Cannot read properties of undefined (reading 'tenantId')",
    ],
    constraints: [
      'All exported functions need doc comments, the linter in CI enforces it.',
      'Never call the database from a route handler; go through the repository layer.',
      'Keep the response envelope exactly as it is, clients parse it.',
      "Don't add runtime dependencies without asking me first.",
    ],
    decisions: [
      'Decision: emails are stored lower-cased, so the unique index does the deduplication.',
      'We decided to use a partial unique index instead of a trigger, since it keeps the check in one place.',
      'I went with cursor pagination rather than offsets, because offsets skip rows when invoices are inserted.',
    ],
    tickets: ['API-1187', 'API-1203', 'API-1240'],
  },
  {
    name: 'py-pipeline',
    messages: 240,
    dirs: ['pipeline/ingest', 'pipeline/transform', 'pipeline/io', 'tests'],
    ext: 'py',
    words: ['events', 'sessions', 'orders', 'schema', 'partition', 'watermark'],
    testCommand: 'pytest -q tests',
    line: (r, w, i) => pick(r, [
      `def load_${w}_${i}(path: Path) -> pl.DataFrame:`,
      `    frame = pl.read_parquet(path).filter(pl.col("${w}_id").is_not_null())`,
      `    return frame.unique(subset=["${w}_id"], keep="last")`,
      `from pipeline.io.${w} import write_${w}`,
      `    logger.info("loaded %d ${w}", frame.height)`,
      '',
    ]),
    pass: () => '........................................                          [100%]\n42 passed in 3.02s\nExit code: 0',
    fail: (file, error) =>
      [
        '============================= test session starts ==============================',
        'platform linux -- Python 3.12.3, pytest-8.2.0, pluggy-1.5.0',
        'rootdir: /home/dev/pipeline',
        'collected 42 items',
        '',
        `${file} ........F.....                                      [ 33%]`,
        'tests/test_schema.py ............................                        [100%]',
        '',
        '=================================== FAILURES ===================================',
        '___________________________ test_dedupe_keeps_latest ___________________________',
        '',
        '    def test_dedupe_keeps_latest():',
        '        frame = load_fixture("events.parquet")',
        '>       assert dedupe(frame).height == 1204',
        `E       ${error}`,
        '',
        `${file}:57: AssertionError`,
        '=========================== short test summary info ============================',
        `FAILED ${file}::test_dedupe_keeps_latest - ${error}`,
        '========================= 1 failed, 41 passed in 3.12s =========================',
        'Exit code: 1',
      ].join('\n'),
    errors: ['AssertionError: assert 1187 == 1204', "KeyError: 'event_id'"],
    constraints: [
      'Use polars, not pandas, for anything new you write.',
      'Type hints on every public function, and run mypy --strict before you say it works.',
      'Never write to the s3://events-prod bucket from a test.',
      'Keep every transform a pure function of its input frame.',
    ],
    decisions: [
      'Decision: late events go to a quarantine table, because replaying them would reorder the watermark.',
      'We decided to partition by event date instead of ingestion date, since the reports filter on it.',
      'I chose zstd over snappy for the parquet files because the files are 40% smaller at the same read speed.',
    ],
    tickets: ['DATA-311', 'DATA-342', 'DATA-377'],
  },
  {
    name: 'go-proxy',
    messages: 310,
    dirs: ['internal/upstream', 'internal/server', 'internal/config', 'cmd/proxy'],
    ext: 'go',
    words: ['upstream', 'pool', 'route', 'health', 'backend', 'limiter'],
    testCommand: 'go test ./internal/...',
    line: (r, w, i) => pick(r, [
      `func (s *Server) ${w}${i}(ctx context.Context) error {`,
      `\tconn, err := s.${w}s.Dial(ctx, addr)`,
      '\tif err != nil {',
      `\t\treturn fmt.Errorf("${w}: %w", err)`,
      '\t}',
      `\tdefer s.metrics.Observe("${w}", time.Since(start))`,
    ]),
    pass: () => 'ok  \tgithub.com/acme/edge-proxy/internal/upstream\t0.412s\nok  \tgithub.com/acme/edge-proxy/internal/server\t0.208s\nExit code: 0',
    fail: (file, error) =>
      [
        '=== RUN   TestUpstreamDial',
        `    ${file.split('/').pop()}:88: ${error}`,
        '--- FAIL: TestUpstreamDial (30.00s)',
        '=== RUN   TestHealth',
        '--- PASS: TestHealth (0.00s)',
        'FAIL',
        'FAIL\tgithub.com/acme/edge-proxy/internal/upstream\t30.214s',
        'ok  \tgithub.com/acme/edge-proxy/internal/server\t0.208s',
        'FAIL',
        'Exit code: 1',
      ].join('\n'),
    errors: ['dial tcp 10.20.0.14:8443: i/o timeout', 'http: server closed idle connection'],
    constraints: [
      'Do not use global mutable state; pass dependencies through the Server struct.',
      'Every new flag needs a default that keeps the current behaviour.',
      'Stick to the standard library for HTTP, no gin and no echo.',
      'Always propagate the request context to upstream calls.',
    ],
    decisions: [
      'Decision: retries happen in the pool, not in the handlers, so a request is retried once at most.',
      'We decided to cap idle connections per backend instead of globally, since one slow backend starved the rest.',
      'I opted for a token bucket rather than a sliding window, because it needs no per-request allocation.',
    ],
    tickets: ['NET-902', 'NET-918', 'NET-935'],
  },
  {
    name: 'rust-cli',
    messages: 390,
    dirs: ['src/sync', 'src/config', 'src/store', 'tests'],
    ext: 'rs',
    words: ['checkpoint', 'manifest', 'chunk', 'remote', 'journal', 'index'],
    testCommand: 'cargo test --lib',
    line: (r, w, i) => pick(r, [
      `pub fn ${w}_${i}(&mut self, at: u64) -> Result<${w[0].toUpperCase()}${w.slice(1)}, SyncError> {`,
      `    let ${w} = self.store.read_${w}(at)?;`,
      `    self.journal.record(Event::${w[0].toUpperCase()}${w.slice(1)}(at));`,
      `use crate::${w}::{${w[0].toUpperCase()}${w.slice(1)}, Options};`,
      '    Ok(value)',
      '}',
    ]),
    pass: () => 'running 48 tests\n........................................\ntest result: ok. 48 passed; 0 failed; 0 ignored; finished in 0.31s\nExit code: 0',
    fail: (file, error) =>
      [
        'running 48 tests',
        'test config::tests::parses_defaults ... ok',
        `test ${file.replace(/^src\//, '').replace(/\.rs$/, '').replace(/\//g, '::')}::tests::resumes_after_restart ... FAILED`,
        '',
        'failures:',
        '',
        '---- sync::tests::resumes_after_restart stdout ----',
        "thread 'sync::tests::resumes_after_restart' panicked at src/sync/resume.rs:214:9:",
        error,
        '  left: 4096',
        ' right: 8192',
        'note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace',
        '',
        'failures:',
        '    sync::tests::resumes_after_restart',
        '',
        'test result: FAILED. 47 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.04s',
        '',
        'error: test failed, to rerun pass `--lib`',
        'Exit code: 101',
      ].join('\n'),
    errors: ['assertion `left == right` failed: checkpoint offset after restart', 'called `Option::unwrap()` on a `None` value'],
    constraints: [
      'Never call unwrap() outside tests; return a typed error instead.',
      'Keep the on-disk manifest format backwards compatible.',
      'Only use std::fs through the Store trait so the tests can fake it.',
      'Target the 1.75 toolchain, the packagers are on it.',
    ],
    decisions: [
      'Decision: the journal is fsynced per batch, not per entry, because per-entry syncs made a sync 9x slower.',
      'We decided to store chunk hashes in the manifest instead of a side file, since a torn write then loses nothing.',
      'I went with blake3 rather than sha256 for chunk ids because it hashes 4x faster here.',
    ],
    tickets: ['CLI-58', 'CLI-64', 'CLI-71'],
  },
]

export const SHAPE_NAMES = SHAPES.map((s) => s.name)

/** Files every project has that are read, never modified. */
const REFERENCE_FILES = ['README.md', 'CONTRIBUTING.md', 'docs/architecture.md', 'docs/release.md']

/** One generated session: its parts (the first, then the later phases) and what each plants. */
export function generateSession(shapeName, seed = 1) {
  const shape = SHAPES.find((s) => s.name === shapeName)
  if (!shape) throw new Error(`unknown session shape ${shapeName}`)
  const random = rng(seed * 7919 + SHAPES.indexOf(shape))
  let seq = 0
  const id = (p) => `${shape.name}-${p}${++seq}`
  const files = shape.dirs.flatMap((d) => shape.words.map((w, i) => `${d}/${w}${i % 2 ? '_' + pick(random, ['util', 'model', 'io']) : ''}.${shape.ext}`))
  const testFiles = files.filter((f) => /^tests?\//.test(f)).map((f) => f.replace(`.${shape.ext}`, shape.ext === 'ts' ? '.test.ts' : `.${shape.ext}`))
  const testFile = () => {
    if (shape.ext === 'py') return `tests/test_${pick(random, shape.words)}.py`
    if (shape.ext === 'go') return `${pick(random, shape.dirs.slice(0, 2))}/${pick(random, shape.words)}_test.go`
    if (shape.ext === 'rs') return `src/sync/${pick(random, shape.words)}.rs`
    return pick(random, testFiles)
  }
  const source = (path, lines) =>
    Array.from({ length: lines }, (_, i) => shape.line(random, pick(random, shape.words), i)).join('\n') + `\n// end of ${path}`

  const userMsg = (text) => ({ id: id('u'), role: 'user', parts: [{ type: 'text', id: id('t'), text }] })
  const toolMsg = (tool, input, output) => ({
    id: id('a'),
    role: 'assistant',
    finish: 'tool-calls',
    parts: [{ type: 'tool', id: id('p'), callID: id('c'), tool, state: { status: 'completed', input, output } }],
  })
  const textMsg = (text) => ({ id: id('a'), role: 'assistant', finish: 'stop', parts: [{ type: 'text', id: id('t'), text }] })

  /** A phase of `target` messages; `plants` says at which share of it each planted fact goes. */
  function phase(target, plants, lastTurnLong) {
    const msgs = []
    const planted = Object.fromEntries(FACT_KINDS.map((k) => [k, []]))
    const due = plants.map((p) => ({ ...p, done: false }))
    // The next fact of `kind` (stated by `by`) due at this point of the phase, marked planted.
    const take = (kind, by) => {
      const at = msgs.length / target
      const d = due.find((p) => !p.done && p.kind === kind && (p.by ?? 'user') === by && p.at <= at)
      if (d) d.done = true
      return d
    }
    while (msgs.length < target) {
      const last = target - msgs.length <= (lastTurnLong ? 26 : 4)
      // The request, with what the user says alongside it.
      const word = pick(random, shape.words)
      const ticket = take('ticket', 'user')
      const extras = []
      for (const kind of ['constraint', 'decision', 'sha']) {
        const d = take(kind, 'user')
        if (!d) continue
        extras.push(kind === 'sha' ? `The regression started with commit ${d.text}, compare against it.` : d.text)
        planted[kind].push(d.text)
      }
      if (ticket) planted.ticket.push(ticket.text)
      const request = `${pick(random, ['Now', 'Next', 'Then', 'OK, now'])} ${pick(random, ['add', 'fix', 'refactor', 'test'])} the ${word} ${pick(random, ['handling', 'path', 'validation', 'errors'])}${ticket ? ` for ${ticket.text}` : ''} (step ${msgs.length}).`
      msgs.push(userMsg([request, ...extras].join(' ')))
      const steps = last ? (lastTurnLong ? 24 : 2) : 3 + Math.floor(random() * 6)
      for (let s = 0; s < steps && msgs.length < target - 1; s++) {
        const path = pick(random, files)
        const r = random()
        const error = take('error', 'tool')
        const made = error ? undefined : take('sha', 'agent')
        if (error) {
          msgs.push(toolMsg('bash', { command: shape.testCommand }, shape.fail(testFile(), error.text)))
          planted.error.push(error.text)
        } else if (made) {
          msgs.push(toolMsg('bash', { command: `git commit -am "${word}: tighten checks"` }, `[main ${made.text}] ${word}: tighten checks\n 2 files changed, 31 insertions(+), 9 deletions(-)`))
          planted.sha.push(made.text)
        } else if (r < 0.4) {
          // Some reads are of files the work never changes (docs, the contributor guide).
          const read = random() < 0.3 ? pick(random, REFERENCE_FILES) : path
          msgs.push(toolMsg('read', { filePath: read }, source(read, 60 + Math.floor(random() * 160))))
          planted.readFile.push(read)
        } else if (r < 0.55) {
          const hits = Array.from({ length: 8 + Math.floor(random() * 20) }, () => `${pick(random, files)}:${1 + Math.floor(random() * 300)}: ${shape.line(random, word, s)}`)
          msgs.push(toolMsg('grep', { pattern: word, path: '.' }, hits.join('\n')))
        } else if (r < 0.8) {
          msgs.push(toolMsg('edit', { filePath: path, oldString: `${word}_old`, newString: `${word}_new` }, 'Edit applied successfully.'))
          planted.modifiedFile.push(path)
        } else if (r < 0.92) {
          msgs.push(toolMsg('bash', { command: shape.testCommand }, shape.pass(testFile())))
        } else {
          msgs.push(toolMsg('bash', { command: 'git status --short' }, ` M ${path}\n M ${pick(random, files)}`))
        }
      }
      const decision = take('decision', 'agent')
      if (decision) {
        msgs.push(textMsg(`Done with the ${word} change. ${decision.text} The tests pass locally.`))
        planted.decision.push(decision.text)
      } else {
        msgs.push(textMsg(`Done with the ${word} change; ${pick(random, ['the tests pass', 'lint is clean', 'I left the old path in place'])}.`))
      }
    }
    const missed = due.filter((d) => !d.done)
    if (missed.length) throw new Error(`${shape.name}: planted nothing for ${missed.map((d) => d.kind).join(', ')}`)
    return { messages: msgs, planted }
  }

  const [c0, c1, c2, c3] = shape.constraints
  const [d0, d1, d2] = shape.decisions
  const [t0, t1, t2] = shape.tickets
  const [e0, e1] = shape.errors
  const first = phase(shape.messages, [
    { kind: 'ticket', at: 0, text: t0 },
    { kind: 'constraint', at: 0.05, text: c0 },
    { kind: 'decision', at: 0.2, text: d0, by: 'user' },
    { kind: 'sha', at: 0.25, text: sha(random), by: 'user' },
    { kind: 'constraint', at: 0.35, text: c1 },
    { kind: 'ticket', at: 0.45, text: t1 },
    { kind: 'decision', at: 0.5, text: d1, by: 'agent' },
    { kind: 'constraint', at: 0.6, text: c2 },
    { kind: 'sha', at: 0.6, text: sha(random), by: 'agent' },
    { kind: 'error', at: 0.4, text: `${e1} (seen first)`, by: 'tool' },
    { kind: 'error', at: 0.7, text: e0, by: 'tool' },
  ], shape.name === 'py-pipeline')
  // The earlier error is an older one: only the newest counts as the last error.
  first.planted.error = [e0]
  const second = phase(60 + Math.floor(random() * 30), [
    { kind: 'ticket', at: 0, text: t2 },
    { kind: 'constraint', at: 0.1, text: c3 },
    { kind: 'decision', at: 0.3, text: d2, by: 'agent' },
    { kind: 'sha', at: 0.4, text: sha(random), by: 'agent' },
    ...(seed % 2 === 0 ? [] : [{ kind: 'error', at: 0.2, text: e1, by: 'tool' }]),
  ])
  const third = phase(50 + Math.floor(random() * 30), [{ kind: 'sha', at: 0.2, text: sha(random), by: 'user' }], shape.name === 'rust-cli')
  return { shape: shape.name, parts: [first, second, third] }
}

/** Everything the model reads of `session`, as one string. */
function modelText(session) {
  const out = []
  const walk = (v) => {
    if (typeof v === 'string') out.push(v)
    else if (Array.isArray(v)) v.forEach(walk)
    else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x)
  }
  walk(session.toModelMessages())
  return out.join('\n')
}

const normalize = (s) => s.replace(/[`\\]/g, ' ').replace(/\s+/g, ' ').trim().toLowerCase()
const strip = (s) => normalize(s).replace(/[.!;:,]+$/, '').trim()

/**
 * The LLM stand-in: writes what the extractive summarizer would from the plan, then forgets every
 * second item of it (a bullet and its continuation lines), whatever the item says.
 */
export function forgetfulSummarizer() {
  return async (req) => {
    const full = extractiveSummary(req.plan, { template: req.template, tokenizer: req.tokenizer, budget: req.maxOutputTokens })
    let n = 0
    let dropping = false
    const kept = []
    for (const line of full.split('\n')) {
      if (/^\s{0,1}(?:[-*]|\d+\.)\s/.test(line)) {
        dropping = !/\(none\)/.test(line) && n++ % 2 === 1
      } else if (!/^\s+\S/.test(line)) dropping = false
      if (!dropping) kept.push(line)
    }
    return { text: kept.join('\n'), finishReason: 'stop' }
  }
}

/**
 * Compacts one generated session three times with a summarizer `makeSummarizer` makes for it, after
 * the first part and after each later phase. For each compaction: which planted facts the model
 * still reads, the context before and after, and whether a summary called an older request the
 * latest one.
 */
export async function runSession(generated, makeSummarizer, { audit = true } = {}) {
  const session = new Session({ model: MODEL, tokenizer: 'estimate' })
  const summarizer = makeSummarizer()
  const soFar = Object.fromEntries(FACT_KINDS.map((k) => [k, []]))
  const requests = []
  const rounds = []
  for (const part of generated.parts) {
    for (const m of part.messages) session.append(m)
    for (const kind of FACT_KINDS) soFar[kind].push(...part.planted[kind])
    if (!rounds.length) soFar.pin.push(session.pinText(PIN).text)
    for (const m of part.messages) if (m.role === 'user') requests.push(m.parts[0].text)
    const before = session.usage().tokens
    const result = await compact(session, { summarizer, audit, auto: true })
    if (result.status !== 'compacted') throw new Error(`${generated.shape}: compaction ${rounds.length + 1} ${result.status}: ${result.reason}`)
    const seen = normalize(modelText(session))
    const current = {
      ...soFar,
      modifiedFile: [...new Set(soFar.modifiedFile)],
      // A file read and then modified is listed once, as modified.
      readFile: [...new Set(soFar.readFile)].filter((f) => !soFar.modifiedFile.includes(f)),
      error: soFar.error.slice(-1),
      request: [requests.at(-1)],
    }
    const facts = Object.fromEntries(
      FACT_KINDS.map((kind) => {
        const list = current[kind]
        const lost = list.filter((f) => !seen.includes(strip(f)))
        return [kind, { planted: list.length, kept: list.length - lost.length, lost }]
      }),
    )
    // "Latest request: X" in the summary must name the newest request, or point past the summary.
    const latest = strip(requests.at(-1))
    const mislabelled = [...result.summary.matchAll(/(?:Latest request|Continue with the latest request): (.*)/g)]
      .map((m) => m[1].trim())
      .filter((said) => !/^in the messages after this summary/.test(said) && !latest.startsWith(strip(said).slice(0, 60)))
    rounds.push({ before, after: session.usage().tokens, facts, mislabelled, restored: result.audit?.restored.length ?? 0, dropped: result.audit?.dropped.length ?? 0 })
  }
  return rounds
}
