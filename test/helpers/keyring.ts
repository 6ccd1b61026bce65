import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { waitFor } from './ports.js'

export interface Keyring {
  /** Environment that points a process at this session bus (and so at its Secret Service). */
  env: Record<string, string>
  stop(): Promise<void>
}

/**
 * A real Secret Service for tests: a private D-Bus session (dbus-run-session) with gnome-keyring
 * unlocked by a throwaway password (or, with `unlock: false`, never unlocked). Processes started
 * with `env` use it as their keychain.
 */
export async function startKeyring(opts: { unlock?: boolean } = {}): Promise<Keyring> {
  // Without --unlock the daemon answers but has no default collection: writes are refused.
  const daemon =
    opts.unlock === false
      ? 'gnome-keyring-daemon --start --components=secrets'
      : 'echo -n test-pw | gnome-keyring-daemon --unlock --components=secrets'
  const script = `${daemon} >/dev/null && echo "BUS=$DBUS_SESSION_BUS_ADDRESS" && exec sleep 3600`
  // A keyring of its own: never the user's, and no stale keyring with another password.
  const home = mkdtempSync(join(tmpdir(), 'broker-keyring-'))
  const proc: ChildProcess = spawn('dbus-run-session', ['--', 'sh', '-c', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: {
      ...process.env,
      HOME: home,
      XDG_DATA_HOME: join(home, 'data'),
      XDG_RUNTIME_DIR: home,
      XDG_CONFIG_HOME: join(home, 'config'),
    },
  })
  let out = ''
  let err = ''
  proc.stdout!.on('data', (d) => (out += d))
  proc.stderr!.on('data', (d) => (err += d))
  const bus = await waitFor(
    async () => {
      if (proc.exitCode !== null) throw new Error(`dbus-run-session exited ${proc.exitCode}: ${err}`)
      return out.match(/^BUS=(\S+)$/m)?.[1]
    },
    15_000,
    'a D-Bus session with gnome-keyring',
  )
  return {
    env: { DBUS_SESSION_BUS_ADDRESS: bus },
    stop: async () => {
      if (proc.exitCode !== null) return rmSync(home, { recursive: true, force: true })
      const exited = new Promise((r) => proc.once('exit', r))
      // The whole group: dbus-run-session, its bus, the keyring daemon and sleep.
      process.kill(-proc.pid!, 'SIGTERM')
      await exited
      rmSync(home, { recursive: true, force: true })
    },
  }
}
