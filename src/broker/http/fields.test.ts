import { describe, expect, it } from 'vitest'
import { routeServers } from '../../../test/helpers/deps.js'
import { checkedText } from './fields.js'

const refusal = (f: () => unknown) => {
  try {
    f()
  } catch (err) {
    return err as { code: string; status: number; message: string; details?: { fields?: Record<string, string> } }
  }
  throw new Error('not refused')
}

describe('checkedText', () => {
  const rules = { hash: { maxLength: 4 }, issuer: { pattern: /^[a-z]{2}$/ } }

  it('takes text within its rule, a list of one as its value, and leaves other fields alone', () => {
    expect(checkedText('querystring', { hash: 'abcd', other: ['x', 'y'] }, rules)).toEqual({ hash: 'abcd' })
    expect(checkedText('querystring', { hash: ['ab'], issuer: 'xy' }, rules)).toEqual({ hash: 'ab', issuer: 'xy' })
    expect(checkedText('body', undefined, rules)).toEqual({})
  })

  it('takes a JSON number, boolean or null as text, as the schemas coerced them', () => {
    expect(checkedText('body', { hash: 12 }, rules)).toEqual({ hash: '12' })
    expect(checkedText('body', { hash: true }, rules)).toEqual({ hash: 'true' })
    expect(checkedText('body', { hash: null }, rules)).toEqual({ hash: '' })
  })

  it('refuses every bad field at once, 400 VALIDATION, naming the part and each field', () => {
    const err = refusal(() => checkedText('querystring', { hash: 'abcde', issuer: 'x1' }, rules))
    expect(err.code).toBe('VALIDATION')
    expect(err.status).toBe(400)
    expect(err.details?.fields).toEqual({
      hash: 'must NOT have more than 4 characters',
      issuer: 'must match pattern "^[a-z]{2}$"',
    })
    expect(err.message).toContain('querystring')
  })

  it('refuses a repeated field and an object where text belongs', () => {
    expect(refusal(() => checkedText('querystring', { hash: ['a', 'b'] }, rules)).details?.fields).toEqual({
      hash: 'must be string',
    })
    expect(refusal(() => checkedText('body', { hash: { a: 1 } }, rules)).details?.fields).toEqual({
      hash: 'must be string',
    })
  })
})

describe('the routes that check their fields', () => {
  const start = routeServers()
  const server = async () => (await start()).app

  it('GET /hash-check: a hash longer than 256 characters, or given twice, is 400 VALIDATION', async () => {
    const app = await server()
    const long = await app.inject({ url: `/hash-check?hash=${'a'.repeat(257)}` })
    expect(long.statusCode).toBe(400)
    expect(long.json()).toMatchObject({
      code: 'VALIDATION',
      fields: { hash: 'must NOT have more than 256 characters' },
    })
    const twice = await app.inject({ url: '/hash-check?hash=a&hash=b' })
    expect(twice.statusCode).toBe(400)
    expect(twice.json()).toMatchObject({ code: 'VALIDATION', fields: { hash: 'must be string' } })
    expect((await app.inject({ url: `/hash-check?hash=${'a'.repeat(256)}` })).statusCode).toBe(404)
  })

  it('/callback/:issuer and /clients/:issuer take only a 22-character base64url segment', async () => {
    const app = await server()
    for (const url of ['/callback/short', '/clients/short', `/clients/${'a'.repeat(21)}!`]) {
      const res = await app.inject({ url })
      expect(res.statusCode, url).toBe(400)
      expect(res.json(), url).toMatchObject({
        code: 'VALIDATION',
        fields: { issuer: expect.stringMatching(/pattern/) },
      })
    }
    const doc = await app.inject({ url: `/clients/${'a'.repeat(22)}` })
    expect(doc.statusCode).toBe(200)
  })

  it('POST /sign: a url that is not text is 400 VALIDATION before any flow is looked up', async () => {
    const app = await server()
    const res = await app.inject({ method: 'POST', url: '/sign', payload: { hash: 'x', url: { a: 1 } } })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'VALIDATION', fields: { url: 'must be string' } })
  })

  it("POST /store answers only the stored flow's fields", async () => {
    const app = await server()
    const res = await app.inject({
      method: 'POST',
      url: '/store',
      payload: { auth_version: '2', auth_leg: '2', client_id: 'c', access_url: 'http://127.0.0.1:9/token' },
    })
    expect(res.statusCode).toBe(200)
    expect(Object.keys(res.json()).sort()).toEqual(['expires_in', 'hash', 'plugin', 'url'])
  })
})
