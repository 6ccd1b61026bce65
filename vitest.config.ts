import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['{commands,src,flows,pdk,test}/**/*.test.{ts,tsx}'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    env: { BROKER_LOG_LEVEL: 'silent' },
  },
})
