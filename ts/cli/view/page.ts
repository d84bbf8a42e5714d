// The page of `contextfold view`: the template `scripts/build-ts.mjs` assembled (style and script
// inline), with the data put in. The same text is served and written by `--out`.
import { readFileSync } from 'node:fs'

import { CliError, EXIT } from '../errors.js'
import type { ViewData } from './data.js'

const MARK = '%DATA%'

let template: string | undefined

function pageTemplate(): string {
  if (template !== undefined) return template
  const url = new URL('./page.html', import.meta.url)
  try {
    template = readFileSync(url, 'utf8')
  } catch (e) {
    throw new CliError(EXIT.FAILURE, 'CF_INTERNAL', `the view page is missing from this build (${url.pathname}): run \`npm run build:ts\``, { cause: e })
  }
  return template
}

/**
 * The page with `data`. The data is JSON in a `<script type="application/json">` element: every
 * `<` is escaped, so no text of the transcript can close it.
 */
export function renderPage(data: ViewData): string {
  const page = pageTemplate()
  const at = page.indexOf(MARK)
  const json = JSON.stringify(data).replace(/</g, '\\u003c')
  return page.slice(0, at) + json + page.slice(at + MARK.length)
}
