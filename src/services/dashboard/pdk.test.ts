import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { listFixtures, replayFixture } from './pdk.js'

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
})
