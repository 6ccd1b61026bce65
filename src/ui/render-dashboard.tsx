import { render } from 'ink'
import { Dashboard } from './Dashboard.js'
import type { DashboardProps } from './types.js'

/**
 * Draws the dashboard full screen (the terminal's alternate screen) until `q` or Ctrl-C, then
 * gives the terminal back as it was. SIGTERM and SIGHUP leave the same way.
 */
export async function renderDashboard(props: DashboardProps, stdout: NodeJS.WriteStream = process.stdout): Promise<void> {
  stdout.write('\x1b[?1049h\x1b[H')
  const app = render(<Dashboard {...props} />, { stdout, exitOnCtrlC: true, patchConsole: true })
  const leave = () => app.unmount()
  process.once('SIGTERM', leave)
  process.once('SIGHUP', leave)
  try {
    await app.waitUntilExit()
  } finally {
    process.off('SIGTERM', leave)
    process.off('SIGHUP', leave)
    stdout.write('\x1b[?1049l')
  }
}
