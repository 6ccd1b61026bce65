import { describe, expect, it } from 'vitest'
import { isHttpUrl, setQuery, urlParts } from './urls.js'

/** What the start steps did before: one searchParams.set per parameter. */
function viaSearchParams(base: string, ...all: Record<string, string>[]): string {
  const url = new URL(base)
  for (const params of all) for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return url.toString()
}

const params = {
  client_id: 'app id/1',
  redirect_uri: 'http://localhost:3000/callback',
  state: 'a-b_c.d~e',
  scope: "read write !'()*~ é 😀 +&=%",
}

describe('setQuery', () => {
  it.each([
    'https://provider.example/authorize',
    'https://Provider.EXAMPLE:443/a/../authorize',
    'https://provider.example/authorize?',
    'https://provider.example/authorize?prompt=login&state=old',
    'https://provider.example/authorize#frag',
    'https://provider.example/authorize?x=1#frag',
    'http://[::1]:8080/o/authorize',
    'https://provider.example/a%20b/authorize',
  ])('leaves %s as searchParams.set would', (base) => {
    expect(setQuery(base, params)).toBe(viaSearchParams(base, params))
  })

  it.each([
    [{ client_id: 'a' }, { state: 'AbC-_.*09' }],
    [{}, { state: 's' }],
    [{ client_id: 'a' }, {}],
    [{}, {}],
    [{ scope: 'x y' }, { state: "needs encoding: é !'()~ +&=" }],
    // A fixed parameter named like a varying one: the varying value replaces it, in its place.
    [
      { state: 'app', client_id: 'a' },
      { state: 'mine', code_challenge: 'c' },
    ],
  ])('sets fixed %j then varying %j as searchParams.set would, again and again', (fixed, varying) => {
    for (const base of ['https://p.example/authorize', 'https://p.example/authorize?x=1']) {
      for (let i = 0; i < 3; i++) expect(setQuery(base, fixed, varying)).toBe(viaSearchParams(base, fixed, varying))
    }
  })

  it('keeps apps that share an authorize URL apart, past the few kept per URL', () => {
    const base = 'https://shared.example/authorize'
    const apps = Array.from({ length: 12 }, (_, i) => ({
      client_id: `app-${i}`,
      redirect_uri: 'http://localhost:3000/callback',
      ...(i % 3 ? { scope: `s${i}` } : {}),
    }))
    for (let round = 0; round < 3; round++) {
      for (const app of apps)
        expect(setQuery(base, app, { state: `st-${round}` })).toBe(viaSearchParams(base, app, { state: `st-${round}` }))
    }
    // The same values in another order are another URL.
    expect(setQuery(base, { b: '2', a: '1' })).toBe(viaSearchParams(base, { b: '2', a: '1' }))
    expect(setQuery(base, { a: '1', b: '2' })).toBe(viaSearchParams(base, { a: '1', b: '2' }))
    expect(setQuery(base, { a: '1' })).toBe(viaSearchParams(base, { a: '1' }))
  })

  it('replaces a parameter the URL already carries', () => {
    expect(setQuery('https://p.example/authorize?response_type=token', { response_type: 'code' })).toBe(
      'https://p.example/authorize?response_type=code',
    )
  })
})

describe('urlParts', () => {
  it('gives the parts of an absolute URL and undefined for anything else', () => {
    expect(urlParts('https://user:pw@Provider.example:8443/x?y#z')).toMatchObject({
      host: 'provider.example:8443',
      hostname: 'provider.example',
      origin: 'https://provider.example:8443',
      pathname: '/x',
      bare: false,
    })
    expect(urlParts('/relative')).toBeUndefined()
    expect(urlParts('not a url')).toBeUndefined()
    // Asked again, the answer is the same (kept), and it cannot be changed by a caller.
    expect(urlParts('not a url')).toBeUndefined()
    expect(Object.isFrozen(urlParts('https://p.example/'))).toBe(true)
  })

  it('stays correct past its bound', () => {
    for (let i = 0; i < 2000; i++) expect(urlParts(`https://p${i}.example/`)?.host).toBe(`p${i}.example`)
  })
})

describe('isHttpUrl', () => {
  it('accepts http(s) with a host only', () => {
    expect(isHttpUrl('https://p.example/authorize')).toBe(true)
    expect(isHttpUrl('HTTP://P.EXAMPLE')).toBe(true)
    expect(isHttpUrl('javascript:alert(1)')).toBe(false)
    expect(isHttpUrl('file:///etc/passwd')).toBe(false)
    expect(isHttpUrl('http://')).toBe(false)
    expect(isHttpUrl('')).toBe(false)
  })
})
