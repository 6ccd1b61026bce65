import { createHmac, createVerify, generateKeyPairSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { baseUri, formParams, isFormBody, percentEncode, readPrivateKey, signRequest, type Signer } from './sign.js'

// RFC 5849 §3.4.1.1: the example request, its base string, and the errata 2550 signature.
describe('RFC 5849 §3.4.1.1 example', () => {
  const signer: Signer = {
    consumerKey: '9djdj82h48djs9d2',
    consumerSecret: 'j49sk3j29djd',
    signatureMethod: 'HMAC-SHA1',
    token: { key: 'kkk9d7dh3k39sjv7', secret: 'dh893hdasih9' },
    realm: 'Example',
  }
  const signed = signRequest(signer, {
    method: 'POST',
    url: 'http://example.com/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b',
    params: formParams('c2&a3=2+q'),
    nonce: '7d8f3e4a',
    timestamp: 137131201,
    version: null,
  })

  it('builds the printed base string', () => {
    expect(signed.baseString).toBe(
      'POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7',
    )
  })

  it('signs it as errata 2550 says (the RFC prints a wrong signature)', () => {
    expect(signed.oauth.oauth_signature).toBe('r6/TJjbCOr97/+UU0NsvSne7s5g=')
    expect(signed.oauth.oauth_signature).not.toBe('bYT5CMsGcbgUdFHObYMEfcx6bsw=')
  })

  it('puts realm first in the header and percent-encodes the signature', () => {
    expect(signed.header).toMatch(/^OAuth realm="Example", /)
    expect(signed.header).toContain('oauth_signature="r6%2FTJjbCOr97%2F%2BUU0NsvSne7s5g%3D"')
    expect(signed.header).not.toContain('a3=')
  })
})

// RFC 5849 §1.2: the photo-sharing example, three signed requests.
describe('RFC 5849 §1.2 photo-sharing example', () => {
  const consumer = {
    consumerKey: 'dpf43f3p2l4k3l03',
    consumerSecret: 'kd94hf93k423kf44',
    signatureMethod: 'HMAC-SHA1' as const,
    realm: 'Photos',
  }

  it('signs the temporary credentials request (POST /initiate over https)', () => {
    const s = signRequest(consumer, {
      method: 'POST',
      url: 'https://photos.example.net/initiate',
      oauth: { oauth_callback: 'http://printer.example.com/ready' },
      nonce: 'wIjqoS',
      timestamp: 137131200,
      version: null,
    })
    expect(s.oauth.oauth_signature).toBe('74KNZJeDHnMBp0EMJ9ZHt/XKycU=')
    expect(s.header).toContain('oauth_callback="http%3A%2F%2Fprinter.example.com%2Fready"')
  })

  it('signs the token request (POST /token with the verifier)', () => {
    const s = signRequest(
      { ...consumer, token: { key: 'hh5s93j4hdidpola', secret: 'hdhd0244k9j7ao03' } },
      {
        method: 'POST',
        url: 'https://photos.example.net/token',
        oauth: { oauth_verifier: 'hfdp7dh39dks9884' },
        nonce: 'walatlh',
        timestamp: 137131201,
        version: null,
      },
    )
    expect(s.oauth.oauth_signature).toBe('gKgrFCywp7rO0OXSjdot/IHF7IU=')
  })

  it('signs the resource request (GET /photos with a query)', () => {
    const s = signRequest(
      { ...consumer, token: { key: 'nnch734d00sl2jdk', secret: 'pfkkdhi9sl3r4s00' } },
      {
        method: 'GET',
        url: 'http://photos.example.net/photos?file=vacation.jpg&size=original',
        nonce: 'chapoH',
        timestamp: 137131202,
        version: null,
      },
    )
    expect(s.oauth.oauth_signature).toBe('MdpQcU8iPSUjWoN/UDMsK2sui9I=')
  })
})

describe('base string rules (§3.4.1)', () => {
  const signer: Signer = { consumerKey: 'ck', consumerSecret: 'cs', signatureMethod: 'HMAC-SHA1' }
  const base = (url: string, extra: Partial<Parameters<typeof signRequest>[1]> = {}) =>
    signRequest(signer, { method: 'get', url, nonce: 'n', timestamp: 1, ...extra }).baseString

  it('lowercases scheme and host and keeps the path as sent', () => {
    expect(baseUri('HTTP://EXAMPLE.COM/r%20v/X?id=123')).toBe('http://example.com/r%20v/X')
  })

  it('drops default ports and keeps the others', () => {
    expect(baseUri('http://example.com:80/a')).toBe('http://example.com/a')
    expect(baseUri('https://example.com:443/a')).toBe('https://example.com/a')
    expect(baseUri('https://example.com:8443/a')).toBe('https://example.com:8443/a')
    expect(baseUri('http://example.com:443/a')).toBe('http://example.com:443/a')
  })

  it('uppercases the method', () => {
    expect(base('http://example.com/')).toMatch(/^GET&/)
  })

  it('sorts by encoded name, then by encoded value for repeated names', () => {
    const b = base('http://example.com/?z=1&a=2&a=10&a=1&A=x')
    const params = decodeURIComponent(b.split('&')[2]!)
    expect(params).toBe(
      'A=x&a=1&a=10&a=2&oauth_consumer_key=ck&oauth_nonce=n&oauth_signature_method=HMAC-SHA1&oauth_timestamp=1&oauth_version=1.0&z=1',
    )
  })

  it('percent-encodes with uppercase hex and leaves unreserved characters alone', () => {
    expect(percentEncode("a b!*'()~-._é/")).toBe('a%20b%21%2A%27%28%29~-._%C3%A9%2F')
    const b = base('http://example.com/?q=a+b%2Bc', { params: [['x', '!*']] })
    expect(b).toContain('q%3Da%2520b%252Bc')
    expect(b).toContain('x%3D%2521%252A')
  })

  it('includes form body parameters alongside the query', () => {
    const b = base('http://example.com/?a=1', { params: formParams('b=2&a=0') })
    expect(decodeURIComponent(b.split('&')[2]!)).toMatch(/^a=0&a=1&b=2&oauth_/)
  })

  it('keeps a parameter that repeats a protocol parameter name', () => {
    const b = base('http://example.com/?oauth_nonce=zzz')
    expect(decodeURIComponent(b.split('&')[2]!)).toContain('oauth_nonce=n&oauth_nonce=zzz')
  })

  it('tells form bodies from JSON and other bodies', () => {
    expect(isFormBody('a=1&b=c%20d')).toBe(true)
    expect(isFormBody('c2&a3=2+q')).toBe(true)
    expect(isFormBody('{"a":"1"}')).toBe(false)
    expect(isFormBody('<xml a="1"/>')).toBe(false)
    expect(isFormBody('a=1', 'application/json')).toBe(false)
    expect(isFormBody('{"a":1}', 'application/x-www-form-urlencoded; charset=utf-8')).toBe(true)
  })
})

describe('signature methods', () => {
  const req = {
    method: 'POST',
    url: 'https://api.example.com/1/items?x=1',
    params: formParams('y=2'),
    nonce: 'abc',
    timestamp: 1700000000,
  }
  const token = { key: 'tok', secret: 's&cret' }

  it('HMAC-SHA1 keys with the encoded consumer and token secrets', () => {
    const s = signRequest({ consumerKey: 'ck', consumerSecret: 'c s', signatureMethod: 'HMAC-SHA1', token }, req)
    expect(s.oauth.oauth_signature).toBe(createHmac('sha1', 'c%20s&s%26cret').update(s.baseString).digest('base64'))
  })

  it('HMAC-SHA256 uses SHA-256 with the same key', () => {
    const s = signRequest({ consumerKey: 'ck', consumerSecret: 'cs', signatureMethod: 'HMAC-SHA256', token }, req)
    expect(s.oauth.oauth_signature_method).toBe('HMAC-SHA256')
    expect(s.oauth.oauth_signature).toBe(createHmac('sha256', 'cs&s%26cret').update(s.baseString).digest('base64'))
  })

  it('PLAINTEXT sends the key itself, encoded once more in the header', () => {
    const s = signRequest({ consumerKey: 'ck', consumerSecret: 'c&s', signatureMethod: 'PLAINTEXT', token }, req)
    expect(s.oauth.oauth_signature).toBe('c%26s&s%26cret')
    expect(s.header).toContain('oauth_signature="c%2526s%26s%2526cret"')
  })

  it('PLAINTEXT without a token ends the key with "&"', () => {
    const s = signRequest({ consumerKey: 'ck', consumerSecret: 'cs', signatureMethod: 'PLAINTEXT' }, req)
    expect(s.oauth.oauth_signature).toBe('cs&')
  })

  it('RSA-SHA1 signs the base string with the private key', () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
    const s = signRequest({ consumerKey: 'ck', signatureMethod: 'RSA-SHA1', privateKey: pem, token }, req)
    expect(createVerify('RSA-SHA1').update(s.baseString).verify(publicKey, s.oauth.oauth_signature!, 'base64')).toBe(
      true,
    )
  })

  it('each signature carries a fresh nonce and the current timestamp', () => {
    const signer: Signer = { consumerKey: 'ck', consumerSecret: 'cs', signatureMethod: 'HMAC-SHA1' }
    const a = signRequest(signer, { method: 'GET', url: 'http://e.com/' })
    const b = signRequest(signer, { method: 'GET', url: 'http://e.com/' })
    expect(a.oauth.oauth_nonce).not.toBe(b.oauth.oauth_nonce)
    expect(Math.abs(Number(a.oauth.oauth_timestamp) - Date.now() / 1000)).toBeLessThan(5)
  })

  it('refuses an unreadable or non-RSA private key without repeating it', () => {
    expect(() => readPrivateKey('-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----')).toThrow(
      /^is not a readable PEM private key$/,
    )
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString()
    expect(() => readPrivateKey(ec)).toThrow(/RSA-SHA1 needs an RSA key/)
  })
})
