// Renders the collected results as Markdown, with the ratios the targets are stated in.
import { PI_VERSION } from '../scripts/install-pi.mjs'

const API = {
  contextfold: "`countTokens(t, 'o200k')` (N-API, per chunk)",
  'ai-tokenizer': '`new Tokenizer(o200k_base).count(t)`',
  "ai-tokenizer encode(t,'all')": "`tokenizer.encode(t, 'all').length`",
  'gpt-tokenizer': '`countTokens(t)` from `gpt-tokenizer/encoding/o200k_base`',
  'js-tiktoken': '`new Tiktoken(o200k_base).encode(t).length`',
}

const int = (n) => Math.round(n).toLocaleString('en-US')
const ms = (x) => (x >= 100 ? x.toFixed(0) : x.toPrecision(3))
const rate = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2))
const times = (x) => `${x.toFixed(2)}×`
const mark = (ok) => (ok ? '✅' : '❌')

/** `align`: one letter per column, l or r (default: first column left, the rest right). */
function table(head, rows, align = 'l'.padEnd(head.length, 'r')) {
  const rule = head.map((_, i) => (align[i] === 'l' ? '---' : '---:')).join('|')
  return [`| ${head.join(' | ')} |`, `|${rule}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n')
}

function envSection(env) {
  return [
    `- Date: ${env.date}`,
    `- Node ${env.node} (${env.platform}), V8 ${env.v8}`,
    `- CPU: ${env.cpu} × ${env.cores} logical cores; load average at start ${env.loadStart}, at end ${env.loadEnd}`,
    `- Addon: \`${env.addon}\` (${env.binding}, modified ${env.addonMtime})`,
    `- Total benchmark wall time: ${env.seconds.toFixed(0)} s`,
  ].join('\n')
}

function perTurnSection(pt) {
  const rows = pt.results.map((r) => {
    const s = r.sizes
    const flat = s[10000].ms / s[100].ms
    // The worst size counts: the target holds only if every history length meets it.
    const overhead = Math.max(...Object.values(s).map((x) => x.ms)) - r.tokenizeMs
    return [
      `\`${r.tokenizer}\``,
      ms(s[100].ms),
      ms(s[1000].ms),
      ms(s[10000].ms),
      `${times(flat)} ${mark(flat <= 1.5)}`,
      ms(r.tokenizeMs),
      `${ms(overhead)} ${mark(overhead <= 0.1)}`,
    ]
  })
  const build = pt.results.flatMap((r) =>
    [100, 1000, 10000].map((n) => [`\`${r.tokenizer}\``, int(n), r.sizes[n].historyMB.toFixed(2), ms(r.sizes[n].buildMs)]),
  )
  return [
    '## 1. Per-turn cost on a native `Session`',
    '',
    `One turn = \`append(new ~${Math.round(pt.results[0].textChars)}-char user message)\` + \`usage()\` + \`isOverflow()\`. ms per turn, median of ${pt.rounds} rounds × ${int(pt.appends)} appends (each on a fresh session built with \`Session.fromMessages\`, after ${pt.warmup} warm-up appends).`,
    '',
    table(
      ['tokenizer', '100 msgs (ms)', '1k msgs (ms)', '10k msgs (ms)', '10k / 100 (target ≤ 1.5×)', 'tokenizing the message alone (ms)', 'overhead beyond tokenization, worst size (ms, target ≤ 0.1)'],
      rows,
    ),
    '',
    '"Tokenizing the message alone" is `countTokens(text, \'o200k\')` / `estimateTokens(text)` on the same texts through the same N-API boundary.',
    '',
    'For context, building the histories (not part of the per-turn cost):',
    '',
    table(['tokenizer', 'messages', 'history JSON (MB)', '`Session.fromMessages` (ms)'], build),
  ].join('\n')
}

function throughputSection(tp) {
  const cf = tp.exact.find((r) => r.name === 'contextfold')
  const js = tp.exact.filter((r) => r.name !== 'contextfold')
  const fastest = js.reduce((a, b) => (b.mbps > a.mbps ? b : a))
  const fastestFirst = js.reduce((a, b) => (b.firstMbps > a.firstMbps ? b : a))
  const rows = [...tp.exact]
    .sort((a, b) => b.mbps - a.mbps)
    .map((r) => [
      r.name,
      API[r.name] ?? '',
      rate(r.firstMbps),
      rate(r.mbps),
      int(r.tokens),
      r.name === 'contextfold' ? '1.00×' : times(cf.mbps / r.mbps),
      String(r.rounds),
    ])
  const ratio = cf.mbps / fastest.mbps
  const ratioFirst = cf.firstMbps / fastestFirst.firstMbps
  const totals = new Set(tp.exact.map((r) => r.tokens))
  const agreement =
    totals.size === 1
      ? `All ${tp.exact.length} counters agree exactly: ${int(cf.tokens)} tokens over ${int(tp.chunks)} chunks.`
      : `Counters disagree: ${tp.exact.map((r) => `${r.name} ${int(r.tokens)} (${r.tokens - cf.tokens >= 0 ? '+' : ''}${r.tokens - cf.tokens})`).join(', ')}. Per-chunk: ${JSON.stringify(tp.diffs)}`
  const large = tp.large
  const extra = [
    ["`countTokensAsync(t, 'o200k')`, one large text", `all chunks joined by newlines, ${(large.bytes / 1e6).toFixed(2)} MB`, ms(large.asyncMs), rate(large.bytes / 1e3 / large.asyncMs), int(large.asyncTokens)],
    ["`countTokens(t, 'o200k')`, same large text", 'the same text', ms(large.syncMs), rate(large.bytes / 1e3 / large.syncMs), int(large.syncTokens)],
    ['`estimateTokens(t)`, per chunk', `${int(tp.chunks)} chunks`, ms(tp.estimate.ms), rate(tp.estimate.mbps), `${int(tp.estimate.tokens)} (${times(tp.estimate.tokens / cf.tokens)} of exact)`],
  ]
  return [
    '## 2. Exact o200k token counting throughput (warm)',
    '',
    `${(tp.bytes / 1e6).toFixed(2)} MB (UTF-8) of real corpus text: string values ≥ 16 chars from every transcript, shuffled and cut into ${int(tp.chunks)} message-sized chunks of ${tp.chunkKB.min.toFixed(0)}–${tp.chunkKB.max.toFixed(0)} KB, each counted with one call. MB/s = 10⁶ bytes per second. Every counter is first warmed on ${(tp.warmupBytes / 1e6).toFixed(1)} MB of other corpus text; "1st pass" is then its first pass over the timed text, "repeat passes" the median of all its passes (piece/merge caches now hold this text).`,
    '',
    table(['counter', 'API', '1st pass MB/s', 'repeat passes MB/s', 'tokens', 'contextfold ÷ this (repeat)', 'passes'], rows, 'llrrrrr'),
    '',
    `**contextfold / fastest JS, repeat passes (${fastest.name}): ${times(ratio)}** (target ≥ 2×) ${mark(ratio >= 2)}`,
    '',
    `**contextfold / fastest JS, 1st pass (${fastestFirst.name}): ${times(ratioFirst)}** (target ≥ 2×) ${mark(ratioFirst >= 2)}`,
    '',
    agreement,
    '',
    table(['contextfold, other paths', 'input', 'ms', 'MB/s', 'tokens'], extra, 'llrrr'),
  ].join('\n')
}

function firstCallSection(fc) {
  const rows = fc.map((r) => [r.name, ms(r.loadMs), ms(r.firstMs), ms(r.secondMs), ms(r.loadMs + r.firstMs)])
  return [
    '## 3. First use (cold, in a fresh process)',
    '',
    `Median of ${fc[0].runs} fresh processes per counter. "Load" is the import plus building the encoder; "first call" counts one real ${(fc[0].chars / 1024).toFixed(0)} KB chunk (contextfold loads its BPE tables lazily here, or in the background as soon as a \`Session\` with an exact tokenizer is created); "warm call" repeats it. Sections 1 and 2 are measured after this cost has been paid.`,
    '',
    table(['counter', 'load (ms)', 'first call (ms)', 'warm call (ms)', 'load + first call (ms)'], rows),
  ].join('\n')
}

/** A target ratio against pi PI_VERSION, marked when that pi ran. */
const target = (ratio, pi) => (pi ? `≥ ${ratio}× ${mark(pi.ratio >= ratio)}` : `≥ ${ratio}× (pi ${PI_VERSION} needs Node 22+)`)

export function storeSection(st) {
  // Targets against pi PI_VERSION, which needs Node 22+ (not marked without it).
  const TARGET = { compacted: 50, uncompacted: 3, 'uncompacted-o200k': 3 }
  const NAMES = { compacted: '(a) compacted 4 times', uncompacted: '(b) never compacted', 'uncompacted-o200k': '(c) never compacted, o200k' }
  const versions = st.cases[0].pi.map((p) => p.version)
  const rows = st.cases.map((c) => [
    NAMES[c.name] ?? c.name,
    c.tokenizer,
    `${int(c.messages)} msgs, ${c.fileMB.toFixed(1)} MB`,
    `${int(c.loadedMessages)} msgs, ~${int(c.contextTokens)} tokens`,
    ms(c.contextfoldMs),
    ms(c.contextfoldReadOnlyMs),
    `${ms(c.contextfoldJsonMs)}${c.snapshotMB ? '' : ' (no snapshot)'}`,
    ...c.pi.map((p) => `${ms(p.ms)}: ${p.ratio.toFixed(1)}× (${p.ratioReadOnly.toFixed(1)}×; JSON only ${p.ratioJson.toFixed(1)}×)`),
    target(TARGET[c.name], c.pi.find((p) => p.version === PI_VERSION)),
  ])
  return [
    '## 4. Opening a long session and building the model context',
    '',
    `contextfold: \`SessionFile.open(path)\` (a writer, as an agent resuming it; in brackets \`readOnly: true\`) + \`store.load(options).toModelMessages()\` + \`close()\`. pi ${versions.join(' and ')}: \`SessionManager.open(path)\` + \`buildSessionContext()\` + \`convertToLlm(messages)\`, ms and contextfold's speed-up (read-only in brackets, then with \`snapshot: false\`). A never-compacted file of 8 MB or more loads from its snapshot (\`<file>.snapshot\`, written by the writer's first, warm-up load; checked against the file, or against its stamp when the file was not written to since); "JSON only" opens with \`snapshot: false\` and parses the file, in its own block of runs. The same synthetic conversation in both formats (user turns, assistant steps with tool calls and 4–11 KB outputs); ms are medians of ` +
      `${st.runs} runs after a warm-up, contextfold's two ways taking turns, each run after a full GC and a turn of the event loop (finalizers run), file in the page cache; Node ${st.node}.`,
    '',
    table(['session', 'tokenizer', 'file', 'loaded (context)', 'contextfold ms', 'read-only ms', 'JSON only ms', ...versions.map((v) => `pi ${v}`), `target (vs pi ${PI_VERSION})`], rows, `lllrrrr${'r'.repeat(versions.length)}l`),
    '',
    `The same, as the first call of a fresh Node process (an agent resuming a session at start-up; modules imported before the clock starts, the file in the page cache): medians of ${st.freshRuns} processes per contender, the contenders alternating.`,
    '',
    table(
      ['session', 'contextfold ms', ...versions.map((v) => `pi ${v}`)],
      st.cases.map((c) => [NAMES[c.name] ?? c.name, ms(c.contextfoldFirstMs), ...c.pi.map((p) => `${ms(p.firstMs)}: ${p.firstRatio.toFixed(1)}×`)]),
      `lr${'r'.repeat(versions.length)}`,
    ),
  ].join('\n')
}

const NOTES = [
  '## Notes',
  '',
  '- Special-token markers (`<|…|>`) and base64/binary payloads are left out of the text: the JS tokenizers reject special tokens by default (contextfold counts them as ordinary text), and images are not prompt text.',
  "- contextfold (per-thread piece counts), ai-tokenizer and gpt-tokenizer (LRU merge caches) cache work on repeated pieces, so repeat passes over the same text are faster than the 1st pass; js-tiktoken has no cache, and its BPE merge is quadratic in piece length, which real tool output (box-drawing rules, long identifiers) hits.",
  '- A counter stops repeating once its passes took 12 s, so js-tiktoken runs fewer passes.',
  '- Each section runs in its own Node process so tables loaded by one do not weigh on another.',
]

export function render({ env, perTurn, throughput, firstCall, store }) {
  return [
    '# contextfold benchmark',
    '',
    envSection(env),
    '',
    perTurnSection(perTurn),
    '',
    throughputSection(throughput),
    '',
    firstCallSection(firstCall),
    '',
    ...(store ? [storeSection(store), ''] : []),
    NOTES.join('\n'),
    '',
  ].join('\n')
}
