import { defineConfig } from 'vitest/config';

// The container tests: one file at a time, since they share the image they build and the machine's
// two cores; image builds and compose start-ups take minutes, not seconds.
export default defineConfig({
  test: {
    include: ['test/deploy/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 900_000,
  },
});
