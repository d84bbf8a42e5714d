import { defineConfig } from 'vitest/config'

// Specs for clients that need Node 22 or later (ai v7, pi 0.87) live in __test__/node22/. `npm test` runs the
// suite on the machine's Node and again on Node 24 (scripts/with-node.mjs), so each of them runs there. The second run
// leaves out the opencode spec (opencode brings its own runtime, a Bun binary, whatever Node runs the suite) and the
// docs spec (it compiles Markdown, whatever Node runs it).
const nodeMajor = Number(process.versions.node.split('.')[0])

export default defineConfig({
  test: {
    include: ['__test__/**/*.spec.ts'],
    exclude: nodeMajor >= 22 ? [] : ['__test__/node22/**'],
    // Some specs move 40-50 MB strings across the native boundary; give slow CI machines room.
    // (No test asserts a duration: these are only upper bounds before vitest gives up.)
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // The native addon is loaded once per test file in its own process.
    pool: 'forks',
  },
})
