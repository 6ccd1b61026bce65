import { describe, expect, it } from 'vitest'
import { answersDirectly, requestToSign } from './request.js'

describe('requestToSign', () => {
  it('defaults the method to GET and uppercases it', () => {
    expect(requestToSign({ url: 'https://api.example.com/x' })).toEqual({
      method: 'GET',
      url: 'https://api.example.com/x',
      params: [],
    })
    expect(requestToSign({ url: 'https://api.example.com/x', method: 'put' })).toMatchObject({ method: 'PUT' })
  })

  it('reads parameters as a JSON object (arrays repeat), a query string, or parameters[name] fields', () => {
    expect(requestToSign({ url: 'http://e.com/', parameters: '{"a":"1","b":[2,true],"c":null}' })).toMatchObject({
      params: [
        ['a', '1'],
        ['b', '2'],
        ['b', 'true'],
      ],
    })
    expect(requestToSign({ url: 'http://e.com/', parameters: 'a=1&a=2&b=x+y' })).toMatchObject({
      params: [
        ['a', '1'],
        ['a', '2'],
        ['b', 'x y'],
      ],
    })
    expect(requestToSign({ url: 'http://e.com/', 'parameters[q]': 'z' })).toMatchObject({ params: [['q', 'z']] })
  })

  it('signs form body fields, not JSON ones', () => {
    expect(requestToSign({ url: 'http://e.com/', method: 'POST', body: 'status=hi' })).toMatchObject({
      params: [['status', 'hi']],
    })
    expect(requestToSign({ url: 'http://e.com/', method: 'POST', body: '{"status":"hi"}' })).toMatchObject({
      params: [],
    })
    expect(
      requestToSign({ url: 'http://e.com/', method: 'POST', body: 'status=hi', content_type: 'text/plain' }),
    ).toMatchObject({ params: [] })
  })

  it('names every bad field at once', () => {
    expect(requestToSign({ method: 'GET /x', parameters: '{"a":{"b":1}}' })).toEqual({
      problems: {
        url: 'is required: the URL of the request to sign',
        method: 'must be an HTTP method such as GET or POST',
        parameters: 'has a nested value under "a": values must be text, numbers or booleans',
      },
    })
    expect(requestToSign({ url: 'javascript:alert(1)', parameters: '{oops' })).toEqual({
      problems: {
        url: 'must be an absolute http(s) URL',
        parameters: 'must be a JSON object or a query string (a=1&b=2)',
      },
    })
  })
})

describe('answersDirectly', () => {
  it('is true without a callback or with oob', () => {
    expect(answersDirectly({ auth_type: 'oauth' })).toBe(true)
    expect(answersDirectly({ auth_type: 'oauth', callback: 'oob' })).toBe(true)
    expect(answersDirectly({ auth_type: 'oauth', callback: 'http://localhost/cb' })).toBe(false)
  })
})
