import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * vitest's global setup: every temporary file and folder of a test run (configs, vaults, pid files,
 * Redis data, browser profiles, the brokers the tests spawn) goes under one folder of its own, removed
 * when the run ends, instead of a thousand folders left behind in the system's temp dir. Test files and
 * the processes they start inherit TMPDIR, which os.tmpdir() reads.
 *
 * Each project of vitest.config.ts runs its global setup, in one process: the first makes the folder,
 * the others reuse it. Nested folders made paths long enough that Chromium refused its socket path.
 */
export default function setup(): (() => void) | undefined {
  if (process.env.BROKER_TESTS_TMPDIR) return undefined
  const root = mkdtempSync(join(tmpdir(), 'broker-tests-'))
  process.env.TMPDIR = root
  process.env.BROKER_TESTS_TMPDIR = root
  return () => {
    delete process.env.BROKER_TESTS_TMPDIR
    rmSync(root, { recursive: true, force: true, maxRetries: 3 })
  }
}
