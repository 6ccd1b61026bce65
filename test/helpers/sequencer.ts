import { BaseSequencer, type TestSpecification } from 'vitest/node'

// The end-to-end files that took longest, measured one after another (`vitest run --reporter=json`,
// 186 files): each 20–70 s, mostly waiting on brokers, Redis failovers and timed waits. Started first,
// they run beside everything else; started last (vitest's own order goes by a results cache a fresh
// checkout lacks, then by file size, and failover.test.ts is small), one of them alone decides when the
// run ends. Only the order depends on this list.
const LONGEST = [
  'test/failover.test.ts',
  'test/dashboard-fit.test.ts',
  'test/scale.test.ts',
  'test/cli-store.test.ts',
  'test/cli-conventions.test.ts',
  'test/faults.test.ts',
  'test/server.test.ts',
  'test/dashboard.test.ts',
  'test/cli-walk.test.ts',
]

/** vitest's order, with the longest end-to-end files moved to the front. */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (spec: TestSpecification) => {
      const at = LONGEST.findIndex((path) => spec.moduleId.endsWith(`/${path}`))
      return at < 0 ? LONGEST.length : at
    }
    // Array#sort is stable: everything else keeps vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b))
  }
}
