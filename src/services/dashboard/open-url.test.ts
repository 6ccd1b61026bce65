import { describe, expect, it } from 'vitest'
import { openUrl } from './open-url.js'

describe('o in the dashboard', () => {
  it('says at once that there is no browser on a Linux session without a display', async () => {
    const started = Date.now()
    const outcome = await openUrl('http://localhost:3000/start?hash=x', {}, 'linux')
    expect(outcome).toEqual({ opened: false, message: 'No browser here (no DISPLAY): open the URL yourself.' })
    expect(Date.now() - started).toBeLessThan(1000)
  })
})
