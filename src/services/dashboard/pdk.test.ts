import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { closePlugins } from '../../../pdk/runner/plugins.js'
import { listFixtures, replayFixture } from './pdk.js'

vi.mock('../../../pdk/runner/plugins.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../pdk/runner/plugins.js')>()
  return { ...real, closePlugins: vi.fn(real.closePlugins) }
})

const FIXTURES = resolve(import.meta.dirname, '../../../fixtures/pdk')

describe('dashboard PDK replay', () => {
  it('lists the *.json fixtures of a folder in name order', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pdk-list-'))
    for (const name of ['b.json', 'a.json', 'notes.txt']) writeFileSync(join(dir, name), '{}')
    expect(listFixtures(dir).map((f) => f.slice(dir.length + 1))).toEqual(['a.json', 'b.json'])
  })

  it('keeps the response as it stood after each phase', async () => {
    const replay = await replayFixture(join(FIXTURES, 'run-phases.json'))
    expect(replay.steps.length).toBeGreaterThan(1)
    expect(replay.steps.length).toBe(replay.result.phases.length)
    expect(replay.steps.map((s) => s.trace.phase)).toEqual(replay.result.phases.map((p) => p.phase))
    // The last step's response is the final response.
    const last = replay.steps.at(-1)!.response
    expect(last.status).toBe(replay.result.response.status)
    expect(last.body).toBe(replay.result.response.body)
  })

  it('replays a Lua plugin step by step, and frees its VM afterwards', async () => {
    vi.mocked(closePlugins).mockClear()
    const replay = await replayFixture(join(FIXTURES, 'lua-hello.json'))
    expect(replay.result.passed).toBe(true)
    const access = replay.steps.find((s) => s.trace.phase === 'access')
    expect(access?.trace.plugin).toBe('lua-hello')
    expect(replay.steps.at(-1)!.response.headers['x-hello-from-lua']).toBe('Lua says bonjour to example.com')
    const closed = vi.mocked(closePlugins).mock.calls
    expect(closed).toHaveLength(1)
    expect(closed[0]![0].map((p) => [p.name, p.worker !== undefined])).toEqual([['lua-hello', true]])
  })
})
