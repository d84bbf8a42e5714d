// Checks the Markdown a reader meets (README.md, CHANGELOG.md, docs/): every relative link and
// image resolves (and its #anchor names a heading there), and every ```ts block compiles, strict,
// against the built package (`contextfold` and its subpaths resolve to dist/ by the package's own
// exports). A block is a module of its own; what it uses without declaring (the `model`, `tools`
// or `session` of the surrounding prose) comes from scripts/doc-blocks.d.ts.
//
//   node scripts/check-docs.mjs [file.md ...]     exit 1 and one line per problem when any
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')

/** README.md, CHANGELOG.md and every .md under docs/, relative to `root`. */
export function markdownFiles(root = ROOT) {
  const files = ['README.md', 'CHANGELOG.md'].filter((f) => existsSync(join(root, f)))
  const walk = (dir) => {
    for (const name of readdirSync(join(root, dir)).sort()) {
      const path = join(dir, name)
      if (statSync(join(root, path)).isDirectory()) walk(path)
      else if (name.endsWith('.md')) files.push(path)
    }
  }
  if (existsSync(join(root, 'docs'))) walk('docs')
  return files
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

/** The anchors of a Markdown text's headings, numbered as GitHub numbers repeats. */
export function anchors(text) {
  const seen = new Map()
  const out = new Set()
  for (const line of stripFences(text).split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!m) continue
    const base = slug(m[1].replace(/`/g, ''))
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

/** The text with fenced blocks blanked (their lines kept, so line numbers stay true). */
function stripFences(text) {
  let inFence = false
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*```/.test(line)) {
        inFence = !inFence
        return ''
      }
      return inFence ? '' : line
    })
    .join('\n')
}

/** Relative links and images that do not resolve: `{ file, line, message }` each. */
export function checkLinks(root, files) {
  const problems = []
  const anchorCache = new Map()
  const anchorsOf = (path) => {
    if (!anchorCache.has(path)) anchorCache.set(path, anchors(readFileSync(path, 'utf8')))
    return anchorCache.get(path)
  }
  for (const file of files) {
    const lines = stripFences(readFileSync(join(root, file), 'utf8')).split('\n')
    lines.forEach((text, i) => {
      // [text](target) and ![alt](target), the inline code spans left out.
      for (const m of text.replace(/`[^`]*`/g, '').matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = m[1]
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // https:, mailto:
        const [path, anchor] = target.split('#')
        const abs = path ? resolve(root, dirname(file), decodeURIComponent(path)) : join(root, file)
        const at = { file, line: i + 1 }
        if (!abs.startsWith(root) || !existsSync(abs)) {
          problems.push({ ...at, message: `link to a missing file: ${target}` })
        } else if (anchor && abs.endsWith('.md') && !anchorsOf(abs).has(anchor)) {
          problems.push({ ...at, message: `link to a missing heading: ${target}` })
        }
      }
    })
  }
  return problems
}

/** The ```ts blocks of a Markdown text: `{ line, code }` each, `line` the block's first line. */
export function tsBlocks(text) {
  const blocks = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*```(ts|typescript)\s*$/.test(lines[i])) continue
    const start = i + 1
    while (++i < lines.length && !/^\s*```\s*$/.test(lines[i]));
    blocks.push({ line: start + 1, code: lines.slice(start, i).join('\n') })
  }
  return blocks
}

/**
 * Compiles every ```ts block of `files` as its own ES module inside `root` (so `contextfold`
 * resolves to the package itself). Returns `{ file, line, message }` for each diagnostic, with
 * the Markdown line it comes from.
 */
export function checkBlocks(root, files, { prelude = join(ROOT, 'scripts/doc-blocks.d.ts') } = {}) {
  const dir = join(root, '.scratch', 'doc-blocks')
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const origin = new Map()
  for (const file of files) {
    tsBlocks(readFileSync(join(root, file), 'utf8')).forEach((block, n) => {
      const name = join(dir, `${file.replace(/[\\/.]/g, '_')}_${n + 1}.mts`)
      // `export {}` makes a block without imports a module too, so its names stay its own.
      writeFileSync(name, `${block.code}\nexport {}\n`)
      origin.set(name, { file, line: block.line })
    })
  }
  const options = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules/@types')],
    skipLibCheck: true,
  }
  const program = ts.createProgram([prelude, ...origin.keys()], options)
  const problems = []
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n')
    const from = d.file && origin.get(resolve(d.file.fileName))
    if (from && d.start !== undefined) {
      const { line } = d.file.getLineAndCharacterOfPosition(d.start)
      problems.push({ file: from.file, line: from.line + line, message: `TS${d.code}: ${message}` })
    } else {
      const where = d.file ? relative(root, d.file.fileName) : 'tsc'
      problems.push({ file: where, line: 0, message: `TS${d.code}: ${message}` })
    }
  }
  return { problems, blocks: origin.size }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = process.argv.length > 2 ? process.argv.slice(2).map((f) => relative(ROOT, resolve(f))) : markdownFiles()
  const links = checkLinks(ROOT, files)
  const { problems, blocks } = checkBlocks(ROOT, files)
  for (const p of [...links, ...problems]) console.error(`${p.file}:${p.line}: ${p.message}`)
  const n = links.length + problems.length
  console.error(`${files.length} files, ${blocks} TypeScript blocks: ${n === 0 ? 'all good' : `${n} problems`}`)
  process.exit(n === 0 ? 0 : 1)
}
