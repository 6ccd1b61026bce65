import { hash } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify } from 'jose'

export interface DpopResource {
  url: string
  close(): Promise<void>
}

/**
 * A protected resource of the tests' own that takes only DPoP-bound tokens (RFC 9449 §7): the
 * `DPoP` proof is verified with jose (typ, signature by its embedded key, htm, htu, iat, ath), then
 * the token is introspected at the provider, and its `cnf.jkt` must be the proof key's thumbprint.
 * Answers 200 `{sub, jkt}`, or 401 with a `WWW-Authenticate: DPoP error=…` challenge.
 */
export async function startDpopResource(introspection: string, credentials: string): Promise<DpopResource> {
  const server: Server = createServer((req, res) => {
    const deny = (why: string) => {
      res.writeHead(401, { 'www-authenticate': `DPoP error="invalid_token", error_description="${why}"` })
      res.end()
    }
    void (async () => {
      const token = /^DPoP (\S+)$/.exec(req.headers.authorization ?? '')?.[1]
      const proof = req.headers.dpop
      if (!token || typeof proof !== 'string') return deny('a DPoP token and proof are required')
      const { payload, protectedHeader } = await jwtVerify(proof, EmbeddedJWK, {
        typ: 'dpop+jwt',
        algorithms: ['ES256', 'ES384', 'ES512', 'RS256', 'PS256', 'EdDSA', 'Ed25519'],
        maxTokenAge: 60,
      }).catch(() => ({ payload: undefined, protectedHeader: undefined }))
      if (!payload || !protectedHeader?.jwk) return deny('the proof does not verify')
      if (payload.htm !== req.method || payload.htu !== `${url}${(req.url ?? '/').split('?')[0]}`)
        return deny('htm or htu does not match')
      if (payload.ath !== hash('sha256', token, 'base64url')) return deny('ath does not match the token')
      const answer = await fetch(introspection, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(credentials).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ token }),
      })
      const info = (await answer.json()) as { active?: boolean; sub?: string; cnf?: { jkt?: string } }
      const jkt = await calculateJwkThumbprint(protectedHeader.jwk)
      if (!info.active) return deny('the token is not active')
      if (info.cnf?.jkt !== jkt) return deny('the token is not bound to the proof key')
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ sub: info.sub ?? null, jkt }))
    })().catch((err: unknown) => {
      res.writeHead(500)
      res.end(String(err))
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const address = server.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  return { url, close: () => new Promise((r) => server.close(() => r())) }
}
