import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BrokerProcess, runCli as runCliIn, startBroker } from './helpers/broker.js'
import { type Keyring, startKeyring } from './helpers/keyring.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'

// Each run in a process of its own: the keychain library keeps the D-Bus session it first connected to, and
// these tests give each run the keychain (refusing, absent, unlocked) of their case.
const runCli = (args: string[], opts: Parameters<typeof runCliIn>[1] = {}) => runCliIn(args, { ...opts, spawn: true })

let broker: BrokerProcess
let provider: OAuth2Provider
let keyring: Keyring
const SECRET = 'kept-s3cret-value'

beforeAll(async () => {
  ;[broker, provider, keyring] = await Promise.all([
    startBroker({ args: ['--store', 'memory'] }),
    startOAuth2Provider(),
    startKeyring(),
  ])
})
afterAll(async () => {
  await Promise.all([broker?.stop(), provider?.stop(), keyring?.stop()])
})

const withKeyring = () => ({ ...keyring.env, BROKER_URL: broker.url })
// A session bus that is not there: no Secret Service answers.
const noKeychain = (extra: Record<string, string> = {}) => ({
  DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus',
  BROKER_URL: broker.url,
  ...extra,
})
const clientCredentials = (id: string) => [
  'store',
  '--flow',
  'oauth2-2',
  '--client-id',
  id,
  '--access-url',
  provider.tokenUrl,
  '--capture',
]

describe('secrets in the OS keychain (real Secret Service)', () => {
  it('saves a secret, finds it on the next run, lists it and deletes it', async () => {
    const saved = await runCli([...clientCredentials('kc-app'), '--client-secret', SECRET, '--save-secret'], {
      env: withKeyring(),
    })
    expect(saved.code, saved.stderr).toBe(0)
    expect(saved.stderr).toContain('Saved the client_secret for kc-app in the OS keychain.')
    expect(saved.stdout).not.toContain(SECRET)

    const found = await runCli(clientCredentials('kc-app'), { env: withKeyring() })
    expect(found.code, found.stderr).toBe(0)
    expect(found.stderr).toContain('Using the client_secret kept in the OS keychain for client_id kc-app.')
    expect(provider.tokenRequests.at(-1)).toMatchObject({ client_id: 'kc-app', client_secret: SECRET })
    expect(found.stdout).toMatch(/access_token\s+ey/)

    const list = await runCli(['secrets', 'list', '--json'], { env: withKeyring() })
    expect(list.code, list.stderr).toBe(0)
    expect(JSON.parse(list.stdout)).toEqual({
      where: 'the OS keychain',
      secrets: [{ broker: broker.url, id: 'kc-app' }],
    })
    expect(list.stdout).not.toContain(SECRET)
    const table = await runCli(['secrets', 'list'], { env: withKeyring() })
    expect(table.stdout).toMatch(new RegExp(`${broker.url.replace(/\./g, '\\.')}\\s+kc-app`))

    const del = await runCli(['secrets', 'delete', 'kc-app'], { env: withKeyring() })
    expect(del.code, del.stderr).toBe(0)
    expect(del.stderr).toContain(`Deleted the secret for kc-app at ${broker.url} from the OS keychain.`)
    const again = await runCli(['secrets', 'delete', 'kc-app'], { env: withKeyring() })
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('No secret is kept in the OS keychain for kc-app')

    const gone = await runCli(clientCredentials('kc-app'), { env: withKeyring() })
    expect(gone.code).toBe(2)
    expect(gone.stderr).toContain('client_secret (--client-secret)')
  })

  it('files secrets by broker URL: another broker does not get them', async () => {
    await runCli([...clientCredentials('kc-two'), '--client-secret', SECRET, '--save-secret'], { env: withKeyring() })
    const list = await runCli(['secrets', 'list', '--broker', 'http://elsewhere.example:3000', '--json'], {
      env: withKeyring(),
    })
    expect(JSON.parse(list.stdout).secrets).toEqual([])
    await runCli(['secrets', 'delete', 'kc-two'], { env: withKeyring() })
  })
})

describe('a Secret Service that refuses (never unlocked: no default collection)', () => {
  let refusing: Keyring
  beforeAll(async () => {
    refusing = await startKeyring({ unlock: false })
  })
  afterAll(async () => {
    await refusing?.stop()
  })

  it('fails --save-secret in one line with KEYCHAIN_UNAVAILABLE before storing, and asks for the secret on the next run', async () => {
    const env = { ...refusing.env, BROKER_URL: broker.url }
    const saved = await runCli([...clientCredentials('rf-app'), '--client-secret', SECRET, '--save-secret'], { env })
    expect(saved.code).toBe(1)
    expect(saved.stdout).toBe('')
    expect(saved.stderr).toMatch(
      /^Error KEYCHAIN_UNAVAILABLE: The OS keychain refused to save the secret for rf-app \(.+\)\.\n {2}→ .*--insecure-storage.*\n$/,
    )
    expect(provider.tokenRequests.some((r) => r.client_id === 'rf-app')).toBe(false)

    const later = await runCli(clientCredentials('rf-app'), { env })
    expect(later.code).toBe(2)
    expect(later.stderr).toContain('client_secret (--client-secret)')
  })
})

describe('without a keychain', () => {
  it('says no keychain answers and falls back to asking (exit 2 without a terminal)', async () => {
    const { code, stderr } = await runCli(clientCredentials('nk-app'), { env: noKeychain() })
    expect(code).toBe(2)
    expect(stderr).toMatch(/No keychain answers here \(.+\)\. Asking for the secret instead\./)
    expect(stderr).toContain('client_secret (--client-secret)')
  })

  it('refuses --save-secret before storing anything, and keeps a 0600 file only with --insecure-storage', async () => {
    const refused = await runCli([...clientCredentials('nk-app'), '--client-secret', SECRET, '--save-secret'], {
      env: noKeychain(),
    })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('Error KEYCHAIN_UNAVAILABLE: No keychain answers here')
    expect(refused.stderr).toContain('--insecure-storage')

    const config = mkdtempSync(join(tmpdir(), 'broker-insecure-'))
    const file = join(config, 'broker', 'secrets.json')
    const env = noKeychain({ XDG_CONFIG_HOME: config })
    const saved = await runCli(
      [...clientCredentials('nk-app'), '--client-secret', SECRET, '--save-secret', '--insecure-storage'],
      { env },
    )
    expect(saved.code, saved.stderr).toBe(0)
    expect(saved.stderr).toContain(`Saved the client_secret for nk-app in ${file} (plaintext, mode 0600).`)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(readFileSync(file, 'utf8')).toContain(SECRET)

    const found = await runCli([...clientCredentials('nk-app'), '--insecure-storage'], { env })
    expect(found.code, found.stderr).toBe(0)
    expect(found.stderr).toContain(
      `Using the client_secret kept in ${file} (the --insecure-storage file) for client_id nk-app.`,
    )

    // Listed without the flag too, as `broker store` finds it, saying where.
    const list = await runCli(['secrets', 'list'], { env })
    expect(list.code, list.stderr).toBe(0)
    expect(list.stderr).toBe(`1 secret in ${file} (the --insecure-storage file).\n`)
    expect(list.stdout).toContain('nk-app')

    const del = await runCli(['secrets', 'delete', 'nobody', '--insecure-storage'], { env })
    expect(del.code).toBe(1)
    expect(del.stderr).toContain(
      `No secret is kept in ${file} for nobody at ${broker.url}; \`broker secrets list\` shows what is kept.`,
    )
  })

  it('says in one line when the plaintext file is damaged or cannot be written', async () => {
    const config = mkdtempSync(join(tmpdir(), 'broker-insecure-'))
    const file = join(config, 'broker', 'secrets.json')
    mkdirSync(join(config, 'broker'))
    writeFileSync(file, 'not json')
    const list = await runCli(['secrets', 'list', '--insecure-storage', '--json'], {
      env: noKeychain({ XDG_CONFIG_HOME: config }),
    })
    expect(list.code).toBe(1)
    expect(JSON.parse(list.stdout).error).toMatchObject({
      code: 'FAILED',
      message: expect.stringMatching(
        new RegExp(`^The secrets file ${file} cannot be read \\(.+\\); fix or delete it\\.$`),
      ),
    })

    // XDG_CONFIG_HOME is a file: the broker/ directory cannot be made.
    const notDir = join(config, 'a-file')
    writeFileSync(notDir, '')
    const save = await runCli(
      [...clientCredentials('nk-file'), '--client-secret', SECRET, '--save-secret', '--insecure-storage'],
      { env: noKeychain({ XDG_CONFIG_HOME: notDir }) },
    )
    expect(save.code).toBe(1)
    expect(save.stderr).toBe(
      `Error FAILED: Cannot write the secrets file ${join(notDir, 'broker', 'secrets.json')} (ENOTDIR).\n`,
    )
  })
})
