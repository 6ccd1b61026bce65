import { describe, expect, it } from 'vitest'
import { displayUrl, oauthParams, shorten } from './params.js'

describe('walk params', () => {
  it('shortens a code to its ends', () => {
    expect(shorten('abcdefghijklmnopqrstuvwxyz')).toBe('abcd…wxyz')
    expect(shorten('short')).toBe('sh…')
  })

  it('decodes OAuth parameters of query and fragment, shortening codes and tokens only', () => {
    const p = oauthParams(
      'https://app.example/cb?code=SplxlOBeZQQYbYS6WxSbIA&state=xyz&redirect_uri=https%3A%2F%2Fb%2Fcb&other=1#access_token=2YotnFZFEjr1zCsicMWpAA',
    )
    expect(p).toEqual({ code: 'Splx…SbIA', state: 'xyz', redirect_uri: 'https://b/cb', access_token: '2Yot…WpAA' })
  })

  it('never shows a credential whole in a displayed URL', () => {
    const url = displayUrl('http://localhost/callback?result=0123456789abcdefghij&state=s')
    expect(url).toBe('http://localhost/callback?result=0123…ghij&state=s')
  })
})
