import { describe, expect, it } from 'vitest'
import { normalizePath } from './path.js'

describe('normalizePath', () => {
  it('decodes percent-encoded unreserved characters', () => {
    expect(normalizePath('/%7Euser/%61%62c%2D%5F%2E')).toBe('/~user/abc-_.')
  })
  it('uppercases the hex of percent-encoded reserved characters and keeps them encoded', () => {
    expect(normalizePath('/a%2fb%3a%3fc%25')).toBe('/a%2Fb%3A%3Fc%25')
  })
  it('decodes characters that are neither reserved nor unreserved, as Kong does (%20 becomes a space)', () => {
    expect(normalizePath('/t/Abc%20123%C3%B8%2f/parent/..//test/./')).toBe('/t/Abc 123ø%2F/test/')
    expect(normalizePath('/%20%21%23%24%25%26%27%28%29%2A%2B%2C%2F%3A%3B%3D%3F%40%5B%5D')).toBe(
      '/ %21%23%24%25%26%27%28%29%2A%2B%2C%2F%3A%3B%3D%3F%40%5B%5D',
    )
  })
  it('keeps the escapes of bytes that are not UTF-8 text', () => {
    expect(normalizePath('/%5f%99%af%2f')).toBe('/_%99%AF%2F')
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
