#!/usr/bin/env node
// Draws the screenshots of docs/guides/view.md (docs/images/view-*.png) with `contextfold view
// --out`, opened in chromium (headless, a fresh profile): the context grid of a corpus session (a
// Codex session near its window, with three compactions of its own and its system prompt); the
// timeline and the last compaction of the same session compacted once more by `contextfold
// compact` (so that compaction holds contextfold's loss audit).
// `node scripts/view-screenshots.mjs` after `npm run build`; needs /usr/bin/chromium.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

import { chromium } from 'playwright-core'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const session = join(root, '..', 'shared', 'corpus', 'codex', 'agentv-019ed99c-3compactions.jsonl')
const images = join(root, 'docs', 'images')
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync']

const dir = mkdtempSync(join(tmpdir(), 'cf-shots-'))
try {
  const cli = (...args) => {
    const run = spawnSync(process.execPath, [join(root, 'dist', 'cli.js'), ...args, '--no-progress'], { encoding: 'utf8' })
    if (run.status !== 0) throw new Error(`${args[0]} failed: ${run.stderr}`)
  }
  const store = join(dir, 'session.jsonl')
  const out = join(dir, 'view.html')
  const before = join(dir, 'before.html')
  cli('view', session, '--out', before)
  cli('compact', session, '--out', store)
  cli('view', store, '--out', out, '--prices', '1.25,10,0.125')
  mkdirSync(images, { recursive: true })
  const context = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
    deviceScaleFactor: 1,
  })
  try {
    const page = await context.newPage()
    await page.goto(pathToFileURL(before).href)
    await page.waitForFunction('window.contextfoldReady === true')
    await page.locator('#context').screenshot({ path: join(images, 'view-grid.png') })
    await page.goto(pathToFileURL(out).href)
    await page.waitForFunction('window.contextfoldReady === true')
    await page.locator('#timeline').screenshot({ path: join(images, 'view-timeline.png') })
    await page.locator('table.compactions tbody tr').last().click()
    await page.locator('#compaction-detail .detail').screenshot({ path: join(images, 'view-compaction.png') })
    console.log(`wrote ${['view-grid.png', 'view-timeline.png', 'view-compaction.png'].map((f) => join('docs', 'images', f)).join(', ')}`)
  } finally {
    await context.close()
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
