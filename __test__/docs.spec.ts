// The docs cannot drift from the package: every relative link of README.md, CHANGELOG.md and docs/
// resolves (its #anchor names a heading there), and every ```ts block compiles, strict, against the
// built package (scripts/check-docs.mjs; `node scripts/check-docs.mjs` prints the same problems).
// The checker's own cases run on Markdown written to a temp dir.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

import { checkBlocks, checkLinks, markdownFiles } from '../scripts/check-docs.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

describe("the repository's Markdown", () => {
  const files = markdownFiles(ROOT)

  it('is README.md, CHANGELOG.md and every page of docs/', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', 'docs/index.md', 'docs/guides/ai-sdk.md']))
  })

  it('links only to files and headings that exist', () => {
    expect(checkLinks(ROOT, files)).toEqual([])
  })

  it('has TypeScript blocks that compile against the built package', () => {
    const { problems, blocks } = checkBlocks(ROOT, files)
    expect(problems).toEqual([])
    expect(blocks).toBeGreaterThan(20)
  })
})

describe('the checker', () => {
  const root = mkdtempSync(join(tmpdir(), 'cf-docs-'))
  afterAll(() => rmSync(root, { recursive: true, force: true }))
  const write = (file: string, text: string) => {
    mkdirSync(dirname(join(root, file)), { recursive: true })
    writeFileSync(join(root, file), text)
  }

  write('docs/b.md', '# B\n\n## `compact(session, options?)`\n\n## Twice\n\n## Twice\n')
  write('docs/img.png', '')

  it('accepts links that resolve, headings named as GitHub names them', () => {
    write('README.md', '[b](docs/b.md) [c](docs/b.md#compactsession-options) [t](docs/b.md#twice-1) ![i](docs/img.png) [w](https://example.com/x.md) `[no](link.md)`\n')
    expect(checkLinks(root, ['README.md'])).toEqual([])
  })

  it('reports a link to a missing file, with its line', () => {
    write('README.md', '# R\n\nSee [the guide](docs/guide.md).\n')
    expect(checkLinks(root, ['README.md'])).toEqual([{ file: 'README.md', line: 3, message: 'link to a missing file: docs/guide.md' }])
  })

  it('reports a link to a heading that does not exist', () => {
    write('docs/a.md', '[b](b.md#nope) and [here](#a) and [there](#missing)\n\n# A\n')
    expect(checkLinks(root, ['docs/a.md'])).toEqual([
      { file: 'docs/a.md', line: 1, message: 'link to a missing heading: b.md#nope' },
      { file: 'docs/a.md', line: 1, message: 'link to a missing heading: #missing' },
    ])
  })

  it('ignores links inside fenced blocks', () => {
    write('README.md', '```text\n[x](missing.md)\n```\n')
    expect(checkLinks(root, ['README.md'])).toEqual([])
  })

  it('reports a block that does not compile, at its Markdown line; a block that does passes', () => {
    write('README.md', '# R\n\n```ts\nconst ok: number = 1\n```\n\n```ts\nconst n: number = 1\nconst s: string = n\n```\n')
    const { problems, blocks } = checkBlocks(root, ['README.md'])
    expect(blocks).toBe(2)
    expect(problems).toEqual([{ file: 'README.md', line: 9, message: "TS2322: Type 'number' is not assignable to type 'string'." }])
  })
})
