import { createServer, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BrokerClient } from './broker-client.js'

// A broker (or something posing as one) answering with a code the CLI must not take for one of its own.
let server: Server
let url = ''
let answer: { status: number; body: unknown } = { status: 400, body: {} }

beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(answer.status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(answer.body))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const a = server.address()
  url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`
})

afterAll(() => new Promise<void>((r) => server.close(() => r())))

describe('BrokerClient', () => {
  it.each(['toString', 'constructor', '__proto__', 'hasOwnProperty'])(
    'takes an answer coded %s as a failure with a non-zero exit code',
    async (code) => {
      answer = { status: 400, body: { code, message: 'nope' } }
      const err = (await new BrokerClient(url).store({ client_id: 'x' }).catch((e: unknown) => e)) as {
        code: string
        exit: number
      }
      expect(err.code).toBe('FAILED')
      expect(err.exit).toBeGreaterThan(0)
    },
  )

  it('keeps a registry code the broker sends', async () => {
    answer = { status: 400, body: { code: 'VALIDATION', message: 'client_id is required', field: 'client_id' } }
    const err = (await new BrokerClient(url).store({}).catch((e: unknown) => e)) as { code: string; exit: number }
    expect(err.code).toBe('VALIDATION')
    expect(err.exit).toBe(2)
  })
})
