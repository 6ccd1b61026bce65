import type { OpenOutcome } from './types.js'
import { openInBrowser } from '../open-browser.js'

/**
 * `o` in the dashboard: opens `url` in the browser and says what became of it. A Linux session with
 * no display (ssh, a container) has no browser to open: that is said at once, without trying.
 */
export async function openUrl(
  url: string,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): Promise<OpenOutcome> {
  if (platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY && !env.BROWSER)
    return { opened: false, message: 'No browser here (no DISPLAY): open the URL yourself.' }
  const said: string[] = []
  const opened = await openInBrowser(url, (line) => said.push(line))
  return { opened, message: opened ? 'Opened in your browser.' : (said.at(-1) ?? 'No browser could be opened.') }
}
