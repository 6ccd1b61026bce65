import { describe, expect, it } from 'vitest'
import { MockLogs } from './mock-logs.js'

const basic = (userinfo: string) => `Basic ${Buffer.from(userinfo).toString('base64')}`
const post = (path: string, headers: Record<string, string> = {}, body = '[{"n":1},{"n":2}]') => ({
  method: 'POST',
  path,
  query: '',
  headers: { 'Content-Type': 'application/json', ...headers },
  body,
})
const get = (path: string) => ({ method: 'GET', path, query: '', headers: {}, body: '' })
const read = (logs: MockLogs, name: string) => JSON.parse(logs.answer(get(`/read_log/${name}`))!.body) as unknown

describe("the mock upstream's /post_auth_log/<name>/<user>/<password>", () => {
  it('keeps what is posted with the right basic credentials, as /post_log does, headers included', () => {
    const logs = new MockLogs()
    // the password is what comes before a second colon, as the mock upstream splits user:password
    const answer = logs.answer(post('/post_auth_log/auth/ann/s3cr', { Authorization: basic('ann:s3cr:more') }))
    expect(answer?.status).toBe(200)
    expect(read(logs, 'auth')).toEqual({
      entries: [
        { n: 1, log_req_headers: { 'content-type': 'application/json', authorization: basic('ann:s3cr:more') } },
        { n: 2, log_req_headers: { 'content-type': 'application/json', authorization: basic('ann:s3cr:more') } },
      ],
      count: 2,
    })
  })

  it('reads Proxy-Authorization first, then Authorization', () => {
    const logs = new MockLogs()
    const both = { 'Proxy-Authorization': basic('ann:pw'), Authorization: basic('bob:no') }
    expect(logs.answer(post('/post_auth_log/p/ann/pw', both))?.status).toBe(200)
    const wrongProxy = { 'Proxy-Authorization': basic('bob:no'), Authorization: basic('ann:pw') }
    expect(logs.answer(post('/post_auth_log/p/ann/pw', wrongProxy))?.status).toBe(401)
    // a Proxy-Authorization that is not basic credentials leaves Authorization to be read
    const notBasic = { 'Proxy-Authorization': 'Bearer x', Authorization: basic('ann:pw') }
    expect(logs.answer(post('/post_auth_log/p/ann/pw', notBasic))?.status).toBe(200)
    expect((read(logs, 'p') as { count: number }).count).toBe(4)
  })

  it("refuses missing, wrong or unreadable credentials with nginx's 401, keeping nothing", () => {
    const logs = new MockLogs()
    const refused: Array<Record<string, string>> = [
      {},
      { Authorization: basic('ann:wrong') },
      { Authorization: basic('ann') },
      { Authorization: 'Basic !!!not-base64' },
      { Authorization: `Bearer ${Buffer.from('ann:pw').toString('base64')}` },
    ]
    for (const headers of refused) {
      const answer = logs.answer(post('/post_auth_log/refused/ann/pw', headers))
      expect(answer?.status).toBe(401)
      expect(answer?.headers).toMatchObject({ 'WWW-Authenticate': 'mock_upstream', 'X-Powered-By': 'mock_upstream' })
      expect(answer?.body).toContain('401 Authorization Required')
    }
    expect(read(logs, 'refused')).toEqual({ entries: [] })
  })
})
