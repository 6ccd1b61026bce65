import { createInterface } from 'node:readline'

/** For `--step`: a pause that waits for Enter on stdin (prompt on stderr); after EOF it no longer waits. */
export function enterToContinue(input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stderr): { pause: (next: string) => Promise<void>; close: () => void } {
  const rl = createInterface({ input, terminal: false })
  const lines: Array<() => void> = []
  let ended = false
  rl.on('line', () => lines.shift()?.())
  rl.on('close', () => {
    ended = true
    for (const wake of lines.splice(0)) wake()
  })
  return {
    pause: (next) => {
      if (ended) return Promise.resolve()
      output.write(`  next: ${next} — press Enter to follow\n`)
      return new Promise<void>((resolve) => lines.push(resolve))
    },
    close: () => rl.close(),
  }
}
