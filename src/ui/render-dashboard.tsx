import type { DashboardProps } from './types.js'

/**
 * Draws the dashboard full screen (the terminal's alternate screen) until `q` or Ctrl-C, then
 * gives the terminal back as it was. SIGTERM and SIGHUP leave the same way.
 */
export async function renderDashboard(
  props: DashboardProps,
  stdout: NodeJS.WriteStream = process.stdout,
): Promise<void> {
  // Ink reads CI / CONTINUOUS_INTEGRATION once, as it loads, and when either is set draws nothing until
  // it exits. A dashboard on a terminal is watched by a person whatever the environment says, so those
  // are cleared before Ink is first imported (hence the dynamic imports).
  if (stdout.isTTY) {
    delete process.env.CI
    delete process.env.CONTINUOUS_INTEGRATION
  }
  const [{ render }, { Dashboard }] = await Promise.all([import('ink'), import('./Dashboard.js')])
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
