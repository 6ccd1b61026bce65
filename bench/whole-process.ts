/**
 * Timing whole processes of the built CLI, for the benches that compare start-up: wall time of each
 * run, and CPU time (user + sys) from /proc/self/stat's reaped-children counters on Linux (10 ms
 * ticks), the figure to trust on a busy machine.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'

export const ROOT = resolve(import.meta.dirname, '..')
export const BIN = resolve(ROOT, 'bin', 'run.js')

/** Reaped children's user + sys seconds so far (Linux), else undefined. */
function childrenCpu(): number | undefined {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')
    // After "pid (comm) ": state is field 3, cutime 16 and cstime 17 (1-based), in clock ticks.
    return (Number(fields[13]) + Number(fields[14])) / 100
  } catch {
    return undefined
  }
}

export interface Sample {
  /** Seconds. */
  wall: number
  /** Seconds of CPU, when the platform tells. */
  cpu?: number
}

/** One `node <args>` from the repository's root (or `cwd`), to its exit; a failed run throws with its stderr. */
export function once(args: string[], cwd = ROOT): Sample {
  const cpu0 = childrenCpu()
  const t0 = performance.now()
  const r = spawnSync(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })
  const wall = (performance.now() - t0) / 1000
  const cpu1 = childrenCpu()
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}:\n${r.stderr}`)
  return { wall, cpu: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0 }
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
