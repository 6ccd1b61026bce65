import { describe, expect, it } from 'vitest'
import { renderHashCheck, renderStatus, secondsLeft, watchEnd } from './render.js'

const answer = {
  hash: 'h1',
  plugin: 'oauth_2_3-legged',
  description: 'OAuth 2 authorization code',
  progress: 'stored' as const,
  expires_in: 60,
  created_at: '2026-01-01T00:00:00.000Z',
  expires_at: '2026-01-01T00:01:00.000Z',
  record: { client_id: 'abc', client_secret: '[redacted]', authorize_params: { prompt: 'consent' } },
}

describe('hash-check render', () => {
  it('counts the seconds left from expires_at, never below zero', () => {
    expect(secondsLeft(answer, Date.parse('2026-01-01T00:00:15.500Z'))).toBe(45)
    expect(secondsLeft(answer, Date.parse('2026-01-01T00:02:00.000Z'))).toBe(0)
    expect(renderStatus(answer, Date.parse('2026-01-01T00:02:00.000Z'))).toBe('stored, expired')
  })

  it('shows the record as a table, objects as JSON', () => {
    const text = renderHashCheck(answer, Date.parse('2026-01-01T00:00:30.000Z'))
    expect(text).toContain('  expires   in 30 s (2026-01-01T00:01:00.000Z)')
    expect(text).toMatch(/client_secret\s+\[redacted\]/)
    expect(text).toContain('{"prompt":"consent"}')
  })

  it('tells how a watch ended: a flow still stored or started when it stops has expired', () => {
    expect(watchEnd({ progress: 'completed' })).toBe('completed')
    expect(watchEnd({ progress: 'failed' })).toBe('failed')
    expect(watchEnd({ progress: 'stored' })).toBe('expired')
    expect(watchEnd({ progress: 'awaiting_callback' })).toBe('expired')
  })
})
