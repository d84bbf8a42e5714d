import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.spec.ts'],
    // Some specs move 40-50 MB strings across the native boundary; give slow CI machines room.
    // (No test asserts a duration: these are only upper bounds before vitest gives up.)
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // The native addon is loaded once per test file in its own process.
    pool: 'forks',
  },
})
