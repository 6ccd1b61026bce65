import { defineConfig } from 'vitest/config'
import LongestFirst from './test/helpers/sequencer.js'

// Four projects, run side by side (docs/architecture.md, "The test suite"):
// - unit: the tests beside the code, in worker threads; no Redis, no child process, no browser.
// - unit-fresh: the Ink tests, each file with fresh modules. `npm run test:quick` runs these two.
// - peers: tests beside the code that start a real peer (redis-server, a child process); forks.
// - e2e: test/, forks. They spend most of their time waiting on the processes they start (bin/run.js,
//   brokers, Redis, providers, a browser), so several run at once although the machine has two cores.
//   A fork runs several files in turn with the modules it loaded (isolate: false): no file there mocks
//   a module or changes process.env.
// Every file starts its own brokers, Redis servers and providers on ports the OS hands out, in folders
// of its own under the run's TMPDIR (test/helpers/tmp-root.ts), so any two files can run side by side.
// test/test-projects.test.ts holds PEERS equal to the unit tests that start a peer.
export const UNITS = '{commands,src,flows,pdk,util}/**/*.test.{ts,tsx}'
export const PEERS = [
  'src/broker/store/coalesce.test.ts',
  'src/broker/store/events-bridge.test.ts',
  'src/broker/store/events-idle.test.ts',
  'src/broker/store/failover.test.ts',
  'src/broker/store/flow-store.test.ts',
  'src/broker/store/io.test.ts',
  'src/broker/store/undo.test.ts',
  'src/services/serve/pid-file.test.ts',
  'pdk/spec-runner/outside.test.ts',
]

// Unit tests share one module graph per worker thread (isolate: false): importing the sources again for
// each file was half the units' time (CPU). The folders in FRESH keep fresh modules per file: vi.mock only
// replaces a module not yet imported (src/services/dashboard/pdk.test.ts failed beside other files), and
// the Ink tests keep React's and Ink's state to themselves. test/test-projects.test.ts holds every
// vi.mock in FRESH.
export const FRESH = ['src/ui/**/*.test.{ts,tsx}', 'src/services/dashboard/**/*.test.{ts,tsx}']

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Files at once, all projects together (VITEST_MAX_WORKERS or --maxWorkers change it).
    maxWorkers: 4,
    sequence: { sequencer: LongestFirst },
    // One temp folder per run, removed at its end (test/helpers/tmp-root.ts).
    globalSetup: ['test/helpers/tmp-root.ts'],
    // server.drainDelay 0: a broker a test spawns (it inherits this) stops at once on SIGTERM; the test
    // of the delay sets its own.
    env: { BROKER_LOG_LEVEL: 'silent', BROKER_SERVER_DRAINDELAY: '0' },
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: [UNITS], exclude: [...PEERS, ...FRESH], pool: 'threads', isolate: false },
      },
      { extends: true, test: { name: 'unit-fresh', include: FRESH, pool: 'threads' } },
      { extends: true, test: { name: 'peers', include: PEERS, pool: 'forks' } },
      { extends: true, test: { name: 'e2e', include: ['test/**/*.test.{ts,tsx}'], pool: 'forks', isolate: false } },
    ],
  },
})
