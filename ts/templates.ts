// Summary templates: the sections a summary has, the format block the summarizer is shown, and how
// the answer is cleaned before use.

/**
 * Summary templates: opencode/pi's anchored sections (default), Claude Code's 9 sections, Hermes's
 * reference snapshot.
 */
export const TEMPLATE_NAMES = ['anchored', 'claude-code', 'hermes'] as const
export type TemplateName = (typeof TEMPLATE_NAMES)[number]

/** What the extractive summarizer fills a section with (see extractive.ts). */
export type DigestKey =
  | 'goal'
  | 'constraints'
  | 'done'
  | 'inProgress'
  | 'blocked'
  | 'decisions'
  | 'next'
  | 'critical'
  | 'files'
  | 'concepts'
  | 'errors'
  | 'userMessages'
  | 'pending'
  | 'current'
  | 'resolved'

export interface TemplateSection {
  /** The Markdown heading, exactly as the summary must write it (`## Goal`). */
  heading: string
  /** What goes in it, shown to the summarizer. */
  hint: string
  /** Filled by the extractive summarizer from this digest entry; none for a heading that only groups subsections. */
  key?: DigestKey
  /** List style: numbered (`1.`) or bullets. */
  numbered?: boolean
}

export interface Template {
  name: TemplateName
  sections: TemplateSection[]
  /** Instructions specific to the template, after the format block. */
  rules: string[]
  /** Extra instructions before the format block (Claude Code's analysis scratchpad). */
  preamble?: string
  /** The usable summary in a model's answer (scratchpad removed, wrapper tags unwrapped). */
  clean(answer: string): string
}

const COMMON_RULES = [
  'Keep every section, in this order, even when it is empty: write "(none)" under an empty one.',
  'Use terse bullets, not prose paragraphs.',
  'Preserve exact file paths, symbols, commands, error strings, URLs and identifiers.',
  "Quote the user's constraints and preferences verbatim.",
  'Do not mention the summary process or that the context was compacted.',
  "Write in the conversation's language.",
]

/** Removes `<analysis>` scratchpads, unwraps `<summary>` / `<template>`, trims. */
export function cleanAnswer(answer: string): string {
  let text = answer.replace(/<analysis>[\s\S]*?<\/analysis>/gi, '')
  // An unclosed scratchpad runs up to the summary (or is all there is).
  const open = text.search(/<analysis>/i)
  if (open >= 0) {
    const summaryAt = text.slice(open).search(/<summary>/i)
    text = summaryAt >= 0 ? text.slice(0, open) + text.slice(open + summaryAt) : text.slice(0, open)
  }
  const wrapped = /<summary>([\s\S]*?)(?:<\/summary>|$)/i.exec(text)
  if (wrapped?.[1] !== undefined && wrapped[1].trim()) text = wrapped[1]
  text = text.replace(/^\s*<\/?template>\s*$/gim, '')
  return text.trim()
}

const anchored: Template = {
  name: 'anchored',
  sections: [
    { heading: '## Goal', hint: 'single-sentence task summary', key: 'goal' },
    { heading: '## Constraints & Preferences', hint: 'user constraints, preferences, specs, quoted verbatim, or "(none)"', key: 'constraints' },
    { heading: '## Progress', hint: '' },
    { heading: '### Done', hint: 'completed work, or "(none)"', key: 'done' },
    { heading: '### In Progress', hint: 'current work, or "(none)"', key: 'inProgress' },
    { heading: '### Blocked', hint: 'blockers, or "(none)"', key: 'blocked' },
    { heading: '## Key Decisions', hint: 'decision and why, or "(none)"', key: 'decisions' },
    { heading: '## Next Steps', hint: 'ordered next actions, or "(none)"', key: 'next', numbered: true },
    { heading: '## Critical Context', hint: 'important technical facts, exact errors, open questions, or "(none)"', key: 'critical' },
    { heading: '## Relevant Files', hint: 'file or directory path: why it matters, or "(none)"', key: 'files' },
  ],
  rules: [],
  clean: cleanAnswer,
}

const claudeCode: Template = {
  name: 'claude-code',
  sections: [
    { heading: '## 1. Primary Request and Intent', hint: "every explicit request and intent of the user, in detail", key: 'goal' },
    { heading: '## 2. Key Technical Concepts', hint: 'technologies, frameworks and concepts discussed', key: 'concepts' },
    { heading: '## 3. Files and Code Sections', hint: 'files examined, modified or created, why each matters, with the important code snippets', key: 'files' },
    { heading: '## 4. Errors and Fixes', hint: 'every error met and how it was fixed, with user feedback on it', key: 'errors' },
    { heading: '## 5. Problem Solving', hint: 'problems solved and troubleshooting still going on', key: 'done' },
    { heading: '## 6. All User Messages', hint: 'every user message that is not a tool result, verbatim or nearly', key: 'userMessages' },
    { heading: '## 7. Pending Tasks', hint: 'tasks explicitly asked for and not done yet', key: 'pending' },
    { heading: '## 8. Current Work', hint: 'precisely what was being worked on right before this summary, with file names and code', key: 'current' },
    { heading: '## 9. Optional Next Step', hint: "the next step, directly in line with the user's latest explicit request; quote where the work stopped", key: 'next' },
  ],
  preamble:
    'Before the summary, think in an <analysis> block: go through the conversation in order and, for each part, note the ' +
    "user's explicit requests and intents, your approach, key decisions, exact file names, code, function signatures, " +
    'edits, errors and how they were fixed, and any user feedback. Then write the summary inside <summary> tags. ' +
    'The <analysis> block is discarded; only the <summary> is kept.',
  rules: ['Be thorough on user feedback: a correction the user made must not be lost.'],
  clean: cleanAnswer,
}

const hermes: Template = {
  name: 'hermes',
  sections: [
    { heading: '## Historical Task Snapshot', hint: 'what the user asked for and why, as of the end of this conversation', key: 'goal' },
    { heading: '## Constraints & Preferences', hint: 'user directives, quoted verbatim, or "(none)"', key: 'constraints' },
    { heading: '## Completed Actions', hint: 'numbered, past tense: what was done, with exact paths and commands', key: 'done', numbered: true },
    { heading: '## Active State', hint: 'the state things were left in: branch, files changed, what passes and fails', key: 'current' },
    { heading: '## Resolved Questions', hint: 'questions that were answered, with the answer', key: 'resolved' },
    { heading: '## Pending Asks', hint: 'requests not yet fulfilled, or "(none)"', key: 'pending' },
    { heading: '## Errors Encountered', hint: 'exact error strings and whether they were fixed', key: 'errors' },
    { heading: '## Relevant Files', hint: 'path: why it matters', key: 'files' },
    { heading: '## Remaining Work', hint: 'ordered next actions, or "(none)"', key: 'next', numbered: true },
    { heading: '## Critical Context', hint: 'anything else needed to continue, or "(none)"', key: 'critical' },
  ],
  rules: [
    'Write it as a historical record: past tense, facts as they stood at the end of the conversation.',
    'Do not address the reader with instructions; a reader will use it as reference only.',
  ],
  clean: cleanAnswer,
}

export const TEMPLATES: Readonly<Record<TemplateName, Template>> = { anchored, 'claude-code': claudeCode, hermes }

/** What `name` does not name, said with the names there are (null when it names a template). */
export function unknownTemplate(name: unknown): string | null {
  if (typeof name === 'string' && Object.hasOwn(TEMPLATES, name)) return null
  const names = TEMPLATE_NAMES.map((n) => `'${n}'`)
  return `unknown template ${JSON.stringify(name)} (use ${names.slice(0, -1).join(', ')} or ${names.at(-1)})`
}

export function getTemplate(name: TemplateName = 'anchored'): Template {
  const problem = unknownTemplate(name)
  if (problem !== null) throw new TypeError(problem)
  return TEMPLATES[name]
}

/** The Markdown skeleton the summary must follow. */
export function formatBlock(t: Template): string {
  const lines: string[] = []
  for (const s of t.sections) {
    if (lines.length && s.heading.startsWith('## ')) lines.push('')
    lines.push(s.heading)
    if (s.hint) lines.push(s.numbered ? `1. [${s.hint}]` : `- [${s.hint}]`)
  }
  return lines.join('\n')
}

/** The format instructions: skeleton and rules. */
export function templateInstructions(t: Template): string {
  const parts: string[] = []
  if (t.preamble) parts.push(t.preamble)
  parts.push(
    'Output exactly the Markdown structure shown inside <template>, keeping the section order unchanged. ' +
      'Do not include the <template> tags in your response.\n<template>\n' +
      formatBlock(t) +
      '\n</template>',
  )
  parts.push(['Rules:', ...[...COMMON_RULES, ...t.rules].map((r) => `- ${r}`)].join('\n'))
  return parts.join('\n\n')
}
