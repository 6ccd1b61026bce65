import { join } from 'node:path'
import { expect } from 'vitest'
import { runSpecFile, type SpecResult } from '../session.js'
import { badgeRoot } from './badge.js'

// What the spec runner's tests share: one spec of ours run in a badge root, and how its results read.

/** Runs `spec` as spec/x_spec.lua in a badge root (testing/badge.ts) with `files` beside it. */
export async function runSpec(spec: string, files: Record<string, string> = {}): Promise<SpecResult[]> {
  const root = badgeRoot({ ...files, 'spec/x_spec.lua': spec })
  return runSpecFile({ root, file: join(root, 'spec/x_spec.lua'), shown: 'spec/x_spec.lua', timeoutMs: 10_000 })
}

/** Each result as `status name: message`. */
export const outcomes = (rs: SpecResult[]) => rs.map((r) => `${r.status} ${r.name}${r.message ? `: ${r.message}` : ''}`)

/** Every test of the spec passed (a failing one shows its message), and there were `n`. */
export function allPass(results: SpecResult[], n: number): void {
  expect(outcomes(results).filter((o) => !o.startsWith('success'))).toEqual([])
  expect(results).toHaveLength(n)
}
