import { describe, expect, it } from 'vitest'
import { normalizePath } from './path.js'

describe('normalizePath', () => {
  it('decodes percent-encoded unreserved characters', () => {
    expect(normalizePath('/%7Euser/%61%62c%2D%5F%2E')).toBe('/~user/abc-_.')
  })
  it('uppercases the hex of other percent-encoded characters and keeps them encoded', () => {
    expect(normalizePath('/a%2fb%3a%20c')).toBe('/a%2Fb%3A%20c')
  })
  it('resolves dot segments', () => {
    expect(normalizePath('/a/./b/../c')).toBe('/a/c')
    expect(normalizePath('/a/b/..')).toBe('/a/')
    expect(normalizePath('/../a')).toBe('/a')
  })
  it('collapses duplicate slashes', () => {
    expect(normalizePath('//a///b')).toBe('/a/b')
  })
  it('resolves dot segments spelled with encoded dots', () => {
    expect(normalizePath('/a/%2E%2E/b')).toBe('/b')
  })
  it('leaves the root alone', () => {
    expect(normalizePath('/')).toBe('/')
  })
})
