import { describe, expect, it } from 'vitest'
import { BrokerError } from '../../errors/index.js'
import { checkRecordDestinations } from './record-check.js'
import { compilePolicy } from './policy.js'
import { configSchema } from '../../config/schema.js'

// A broker that listens beyond loopback: internal addresses are refused without providers.allow.
const policy = compilePolicy(configSchema.parse({ listen: '0.0.0.0', api: { open: true } }))

const codeOf = (record: Record<string, unknown>): { code: string; fields?: unknown } => {
  try {
    checkRecordDestinations({ auth_type: 'oauth', ...record }, policy)
  } catch (err) {
    if (err instanceof BrokerError) return { code: err.code, fields: err.details?.fields }
    throw err
  }
  return { code: 'OK' }
}

describe('checkRecordDestinations', () => {
  it('answers PROVIDER_NOT_ALLOWED when refused destinations are the only problems, one field or several', () => {
    expect(codeOf({ access_url: 'http://169.254.169.254/token' }).code).toBe('PROVIDER_NOT_ALLOWED')
    expect(
      codeOf({ authorize_url: 'http://169.254.169.254/latest', access_url: 'http://169.254.169.254/token' }).code,
    ).toBe('PROVIDER_NOT_ALLOWED')
  })

  it('answers VALIDATION naming every field when another problem comes with a refusal', () => {
    const answer = codeOf({ authorize_url: 'http://169.254.169.254/latest', access_url: 'https://u:p@a.example/t' })
    expect(answer.code).toBe('VALIDATION')
    expect(Object.keys(answer.fields as object).sort()).toEqual(['access_url', 'authorize_url'])
  })

  it('tells a link-local or metadata URL that no providers.allow entry opens it; an internal one that one does', () => {
    const refusal = (url: string) => {
      try {
        checkRecordDestinations({ auth_type: 'oauth', authorize_url: url }, policy)
      } catch (err) {
        if (err instanceof BrokerError) return err
        throw err
      }
      throw new Error(`${url} passed`)
    }
    for (const url of ['http://169.254.169.254/latest', 'http://[fe80::1]/auth', 'http://[fd00:ec2::254]/auth']) {
      const err = refusal(url)
      expect(err.code, url).toBe('PROVIDER_NOT_ALLOWED')
      expect(err.message, url).toMatch(/link-local|metadata/)
      expect(`${err.message} ${err.next}`, url).not.toMatch(/providers\.allow/)
    }
    const internal = refusal('http://10.0.0.5/auth')
    expect(internal.message).toContain('name it in providers.allow')
  })

  it('lets public provider URLs through', () => {
    expect(codeOf({ authorize_url: 'https://a.example/auth', access_url: 'https://a.example/token' }).code).toBe('OK')
  })
})
