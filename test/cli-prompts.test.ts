import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'
import { runInTerminal, type Terminal } from './helpers/tmux.js'

let broker: BrokerProcess
let provider: OAuth2Provider
let term: Terminal | undefined

beforeAll(async () => {
  ;[broker, provider] = await Promise.all([startBroker({ args: ['--store', 'memory'] }), startOAuth2Provider()])
})
afterAll(async () => {
  term?.stop()
  await Promise.all([broker?.stop(), provider?.stop()])
})

describe('prompts in a real terminal (tmux)', () => {
  it('asks for every missing field, masks the secret and validates URLs', async () => {
    const secret = 'typed-s3cret'
    term = runInTerminal(['store', '--flow', 'oauth2-2', '--capture'], { BROKER_URL: broker.url })
    await term.waitFor(/client_id — OAuth 2 client id\./)
    term.type('tty-client')
    term.send('Enter')
    await term.waitFor(/client_secret — /)
    term.type(secret)
    await term.waitFor(/\*{12}/)
    expect(term.screen()).not.toContain(secret)
    term.send('Enter')
    await term.waitFor(/access_url — /)
    term.type('not a url')
    term.send('Enter')
    await term.waitFor(/Enter an absolute http\(s\) URL/)
    term.send(...Array(9).fill('BSpace'))
    term.type(provider.tokenUrl)
    term.send('Enter')
    expect(await term.exitCode()).toBe(0)
    const screen = term.screen()
    expect(screen).toMatch(/Result \(delivered by code\):/)
    expect(screen).toMatch(/access_token\s+ey/)
    expect(screen).not.toContain(secret)
    expect(provider.tokenRequests.at(-1)).toMatchObject({ client_id: 'tty-client', client_secret: secret, grant_type: 'client_credentials' })
  })
})
