// The largest tool outputs, and every figure `inspect --json` gives for this input and options,
// exactly: the same report, drawn as tables.
import type { InspectReport } from '../../inspect.js'
import { card, h, int, pairs, plural, usd } from './dom.js'

export function toolOutputsSection(r: InspectReport, showMessage: (id: string) => void): HTMLElement {
  const rows = r.largestToolOutputs
  if (rows.length === 0) return card('tools', 'Largest tool outputs', 'No tool output in the context.')
  return card(
    'tools',
    'Largest tool outputs',
    'The tool results that take the most of the context now.',
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, h('th', { class: 'num' }, 'Tokens'), h('th', {}, 'Tool'), h('th', {}, 'File'), h('th', {}, 'Message'), h('th', {}, ''))),
      h(
        'tbody',
        {},
        ...rows.map((t) =>
          h(
            'tr',
            {},
            h('td', { class: 'num' }, int(t.tokens)),
            h('td', {}, t.tool),
            h('td', { class: 'mono' }, t.path ?? h('span', { class: 'faint' }, '—')),
            h('td', { class: 'mono' }, h('a', { href: '#messages', onclick: (e) => (e.preventDefault(), showMessage(t.messageID)) }, t.messageID)),
            h('td', {}, t.pruned ? h('span', { class: 'badge pruned' }, 'pruned') : ''),
          ),
        ),
      ),
    ),
  )
}

const yes = (b: boolean) => (b ? 'yes' : 'no')

export function figuresSection(r: InspectReport): HTMLElement {
  const tc = r.toolCalls
  const u = r.usage
  const cost = r.cost
  const groups: Array<[string, Array<[string, string]>]> = [
    [
      'Session',
      [
        ['format', r.format],
        ['messages', int(r.messages.total)],
        ['in the context', int(r.messages.context)],
        ['turns', int(r.turns.total)],
        ['turns in the context', int(r.turns.context)],
        ['tool calls', int(tc.total)],
        ['completed', int(tc.completed)],
        ['failed', int(tc.error)],
        ['unanswered', int(tc.pending)],
        ['pruned', int(tc.pruned)],
        ['compactions', int(r.compactions)],
        ['tokenizer', r.options.tokenizer ?? 'default'],
      ],
    ],
    [
      'Window and usage',
      [
        ['window', int(r.window.context)],
        ...(r.window.output !== undefined ? ([['output reserve', int(r.window.output)]] as Array<[string, string]>) : []),
        ['usable', int(r.window.usable)],
        ['tokens', int(u.tokens)],
        ['provider-reported part', int(u.usageTokens)],
        ['locally counted part', int(u.localTokens)],
        ['pressure', `${u.pressure.toFixed(2)} (${u.tier})`],
        ['source', u.source],
        ['calibration', u.calibration.toFixed(3)],
        ['local count of the context', int(r.localTokens)],
      ],
    ],
    [
      'By kind (breakdown)',
      [
        ['system', int(r.breakdown.system)],
        ['user', int(r.breakdown.user)],
        ['assistant', int(r.breakdown.assistant)],
        ['reasoning', int(r.breakdown.reasoning)],
        ['tool calls', int(r.breakdown.toolCalls)],
        ['tool output', int(r.breakdown.toolOutput)],
        ['media', int(r.breakdown.media)],
        ['summaries', int(r.breakdown.summaries)],
        ['per-message overhead', int(r.breakdown.overhead)],
      ],
    ],
    [
      'Sent to the model',
      [
        ['tokens', int(r.sent.tokens)],
        ['messages', int(r.sent.messages)],
        ['system prompt', `${int(r.sent.system)}${r.sent.source.system ? ` (${r.sent.source.system})` : ''}`],
        ['tools', `${int(r.sent.tools)}${r.sent.source.tools ? ` (${r.sent.source.tools})` : ''}`],
      ],
    ],
    [
      'Prune now',
      [
        ['tokens freed', int(r.prune.tokensFreed)],
        ['tool outputs', int(r.prune.parts)],
        ['messages', int(r.prune.messages)],
        ['tokens after', int(r.prune.tokensAfter)],
      ],
    ],
    [
      `Cost (${cost.priced === 'relative' ? 'no prices known: relative' : cost.priced === 'options' ? '--prices' : "the model's prices"})`,
      [
        ['next request', usd(cost.nextRequest)],
        ['cache', cost.warm ? 'warm' : 'cold'],
        ['prune saves', usd(cost.prune.saving)],
        ['prune costs', usd(cost.prune.cost)],
        ['the default policy prunes', yes(cost.prune.pays)],
        ['a compaction', usd(cost.compaction)],
        ['next compaction at', int(cost.compactAt.tokens)],
        ['due', yes(cost.compactAt.due)],
        ['waits a step', yes(cost.compactAt.waits)],
      ],
    ],
    [
      'Where a compaction would cut',
      [
        ['overflows', yes(r.cut.overflow)],
        ['head end', int(r.cut.headEnd)],
        ['summarized messages', int(r.cut.headMessages)],
        ['summarized tokens', int(r.cut.headTokens)],
        ['kept messages', int(r.cut.tailMessages)],
        ['kept tokens', int(r.cut.tailTokens)],
        ['kept from', r.cut.tailStartID ?? '—'],
      ],
    ],
  ]
  const st = r.stats
  if (st) {
    groups.push([
      'Import',
      [
        ['records', int(st.records)],
        ['tool calls', int(st.toolCalls)],
        ['compactions', int(st.compactions)],
        ['skipped', int(st.skipped)],
        ['off the branch', int(st.offBranch)],
        ['merged', int(st.merged)],
        ['added', int(st.added)],
        ...Object.entries(st.omitted).map(([k, v]): [string, string] => [`left out: ${k}`, int(v)]),
      ],
    ])
  }
  const warnings = r.warnings.length
    ? h(
        'div',
        {},
        h('h3', {}, `Import warnings (${int(r.warnings.length)})`),
        h('pre', { class: 'block' }, r.warnings.map((w) => `${w.line > 0 ? `line ${w.line}` : 'input'}: ${w.message}`).join('\n')),
      )
    : null
  return card(
    'figures',
    'Figures',
    `Every figure of \`contextfold inspect --json\` for this input and these options (${plural(r.messages.total, 'message')}).`,
    h('div', { class: 'figure-groups' }, ...groups.map(([title, rows]) => h('div', {}, h('h3', {}, title), pairs(rows)))),
    warnings,
  )
}
