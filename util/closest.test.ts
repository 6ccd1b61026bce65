import { describe, expect, it } from 'vitest'
import { closest, editDistance } from './closest.js'

describe('closest', () => {
  it('counts a swap of neighbours as one edit, so a swapped letter finds its word', () => {
    expect(editDistance('stroe', 'store')).toBe(1)
    expect(editDistance('stroe', 'serve')).toBe(2)
    expect(closest('stroe', ['serve', 'store'])).toBe('store')
  })

  it('suggests nothing farther than a third of the word', () => {
    expect(closest('oauth3', ['oauth2-3', 'oauth1-3'])).toBe('oauth2-3')
    expect(closest('myspace', ['github', 'google'])).toBeUndefined()
  })
})
