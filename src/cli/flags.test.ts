import { describe, expect, it } from 'vitest'
import { DEFAULT_BROKER_URL } from '../services/broker-client.js'
import { apiKeyFlag, brokerFlag, brokerFlagWithoutDefault, configFileFlag } from './flags.js'

describe('shared flags', () => {
  it('--broker reads BROKER_URL, else the local broker, whatever summary a command gives it', () => {
    expect(brokerFlag()).toMatchObject({ env: 'BROKER_URL', default: DEFAULT_BROKER_URL, summary: 'The broker URL.' })
    expect(brokerFlag({ summary: 'The broker URL the secret was saved for.' })).toMatchObject({
      env: 'BROKER_URL',
      default: DEFAULT_BROKER_URL,
    })
    expect(brokerFlagWithoutDefault()).toMatchObject({ env: 'BROKER_URL' })
    expect(brokerFlagWithoutDefault().default).toBeUndefined()
  })

  it('--api-key reads BROKER_API_KEY; -c is --config', () => {
    expect(apiKeyFlag()).toMatchObject({ env: 'BROKER_API_KEY', multiple: false })
    expect(configFileFlag()).toMatchObject({ char: 'c' })
    expect(configFileFlag().env).toBeUndefined()
  })
})
