import Fastify, { type FastifyBaseLogger } from 'fastify'
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { brokerError } from '../../errors/index.js'
import { installErrorHandling } from './errors.js'

describe('the store-unavailable warning', () => {
  it('is logged once for a burst of 503s, not once per request', async () => {
    const lines: Array<{ msg: string; answered503?: number }> = []
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
    const app = Fastify({ loggerInstance: log as FastifyBaseLogger })
    installErrorHandling(app, {})
    app.get('/down', async () => {
      throw brokerError('storeNotAnswering')
    })
    try {
      for (let i = 0; i < 20; i++) {
        const res = await app.inject({ url: '/down' })
        expect(res.statusCode).toBe(503)
        expect(res.json().code).toBe('STORE_UNAVAILABLE')
      }
    } finally {
      await app.close()
    }
    expect(lines.filter((l) => l.msg === 'flow store unavailable')).toEqual([
      expect.objectContaining({ answered503: 1 }),
    ])
  })
})
