import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['{commands,src,flows,pdk,util,test}/**/*.test.{ts,tsx}'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One temp folder per run, removed at its end (test/helpers/tmp-root.ts).
    globalSetup: ['test/helpers/tmp-root.ts'],
    // server.drainDelay 0: a broker a test spawns (it inherits this) stops at once on SIGTERM; the test
    // of the delay sets its own.
    env: { BROKER_LOG_LEVEL: 'silent', BROKER_SERVER_DRAINDELAY: '0' },
  },
})
