import { describe, expect, it } from 'vitest'
import { checkUrl } from './prompt.js'

describe('checkUrl', () => {
  it('takes an absolute http(s) URL, and oob for the callback only', () => {
    expect(checkUrl('https://provider.example/authorize', 'authorize_url')).toBe(true)
    expect(checkUrl('oob', 'callback')).toBe(true)
    expect(checkUrl('oob', 'access_url')).not.toBe(true)
  })

  it("gives an example of the field's own kind of URL: an authorization URL for authorize_url, not a token URL", () => {
    expect(checkUrl('provider/authorize', 'authorize_url')).toBe(
      'Enter an absolute http(s) URL such as https://provider.example/oauth/authorize',
    )
    expect(checkUrl('token', 'access_url')).toBe(
      'Enter an absolute http(s) URL such as https://provider.example/oauth/token',
    )
    expect(checkUrl('cb', 'callback')).toBe(
      'Enter an absolute http(s) URL such as https://app.example/oauth/callback, or oob',
    )
  })
})
