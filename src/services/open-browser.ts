import type { ChildProcess } from 'node:child_process'
import open from 'open'

/** How long to wait for the opener (xdg-open, open, start) to fail before taking it as started. */
const SETTLE_MS = 1500

/**
 * `--open`: opens `url` in the user's browser and says so on stderr. When no browser starts (a
 * headless machine: xdg-open exits non-zero), says to open the URL by hand instead of failing.
 */
export async function openInBrowser(url: string, notify: (line: string) => void): Promise<boolean> {
  notify(`Opening ${url} in your browser…`)
  let child: ChildProcess
  try {
    child = await open(url)
  } catch (err) {
    notify(`No browser could be opened (${(err as Error).message}); open the URL yourself.`)
    return false
  }
  const outcome = await new Promise<number | Error | undefined>((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode)
    // A browser started in the foreground keeps the opener running: after a while, take it as opened.
    const timer = setTimeout(() => resolve(undefined), SETTLE_MS)
    const done = (value: number | Error) => {
      clearTimeout(timer)
      resolve(value)
    }
    child.once('error', done).once('exit', (code) => done(code ?? 0))
  })
  if (outcome === undefined || outcome === 0) return true
  notify(
    `No browser could be opened (${outcome instanceof Error ? outcome.message : `the opener exited ${outcome}`}); open the URL yourself.`,
  )
  return false
}
