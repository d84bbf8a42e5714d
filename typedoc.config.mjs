// The API reference, `npm run docs:api` -> docs/api/ (not committed; CI builds it, and a TypeDoc
// error fails the build). It documents the package as an app sees it: the built typings of every
// entry of package.json's `exports`, each module named by its import path (`contextfold/ai`), so a
// new or renamed entry is picked up without listing it here.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'))

/** Import path -> typings file, for every entry that has typings. */
const entries = Object.entries(pkg.exports)
  .filter(([, entry]) => entry.types)
  .map(([key, entry]) => ({ name: key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`, types: entry.types }))

/** @type {Partial<import('typedoc').TypeDocOptions>} */
export default {
  entryPoints: entries.map((e) => e.types),
  out: 'docs/api',
  tsconfig: 'tsconfig.typedoc.json',
  readme: 'none',
  name: pkg.name,
  plugin: [fileURLToPath(import.meta.url)],
}

/**
 * TypeDoc names a module by its file (`dist/ai`); an app imports it as `contextfold/ai`. This file is
 * its own plugin: it renames each entry's module before the pages are laid out.
 * @param {import('typedoc').Application} app
 */
export async function load(app) {
  const { Converter, ReflectionKind } = await import('typedoc')
  // TypeDoc's own name for an entry: its path below the entries' common folder, without `.d.ts`
  // and a last `/index` (the root entry, `dist/index.d.ts`, stays `index`).
  const paths = entries.map((e) => e.types.replace(/^\.\//, '').replace(/\.d\.ts$/, ''))
  const dirs = paths.map((p) => p.split('/').slice(0, -1))
  const common = dirs.reduce((a, d) => {
    const differs = a.findIndex((part, i) => part !== d[i])
    return differs < 0 ? a : a.slice(0, differs)
  })
  const relative = (p) => p.split('/').slice(common.length).join('/').replace(/(.)\/index$/, '$1')
  const byFile = new Map(paths.map((p, i) => [relative(p), entries[i].name]))
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getReflectionsByKind(ReflectionKind.Module)) {
      const name = byFile.get(module.name)
      if (!name) throw new Error(`typedoc.config.mjs: no package export for the module ${module.name}`)
      module.name = name
    }
  })
}
