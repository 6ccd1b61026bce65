import { createInterface } from 'node:readline'

/** For `--step`: a pause that waits for Enter on stdin (prompt on stderr); after EOF it no longer waits. */
export function enterToContinue(
  input: NodeJS.ReadableStream = process.stdin,
  output: NodeJS.WritableStream = process.stderr,
): { pause: (next: string) => Promise<void>; close: () => void } {
  const rl = createInterface({ input, terminal: false })
  const lines: Array<() => void> = []
  let ended = false
  // Enter pressed ahead of time counts for the next hops (typed-ahead, or piped newlines).
  let ahead = 0
  rl.on('line', () => {
    const wake = lines.shift()
    if (wake) wake()
    else ahead++
  })
  rl.on('close', () => {
    ended = true
    for (const wake of lines.splice(0)) wake()
  })
  return {
    pause: (next) => {
      if (ended) return Promise.resolve()
      if (ahead > 0) {
        ahead--
        return Promise.resolve()
      }
      output.write(`  next: ${next} — press Enter to follow\n`)
      return new Promise<void>((resolve) => lines.push(resolve))
    },
    close: () => {
      rl.close()
      // A still-open stdin (a pipe nobody closed) must not keep the process alive after the walk.
      ;(input as NodeJS.ReadableStream & { unref?: () => void }).unref?.()
      input.pause()
    },
  }
}
