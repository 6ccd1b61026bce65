import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A hand-made provider's /authorize that signs the user in at once: the browser goes back to `redirectUri`
 * with the code `the-code` and the `state` it came with.
 */
export function redirectBack(res: ServerResponse, redirectUri: string, state: string): void {
  const back = new URL(redirectUri)
  back.searchParams.set('code', 'the-code')
  back.searchParams.set('state', state)
  res.writeHead(302, { location: back.toString() })
  res.end()
}

/**
 * The /store record of an OAuth 2 code flow (client `c`) at a hand-made provider: its /authorize at
 * `provider`, its token endpoint at `provider` + `tokenPath` (where the tests name what it does), the
 * app's `callback` and `state`; `more` adds fields.
 */
export function codeFlow(
  provider: string,
  tokenPath: string,
  app: { callback: string; state: string },
  more: Record<string, string> = {},
): Record<string, string> {
  return {
    auth_version: '2',
    auth_leg: '3',
    client_id: 'c',
    authorize_url: `${provider}/authorize`,
    access_url: `${provider}${tokenPath}`,
    callback: app.callback,
    state: app.state,
    ...more,
  }
}

/**
 * A hand-made provider on a loopback port: its /authorize signs the user in at once (redirectBack); every
 * other request, its body drained, goes to `other` (a token endpoint whose path names what it does).
 */
export async function startCodeProvider(
  other: (url: URL, res: ServerResponse) => void,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    if (url.pathname === '/authorize')
      return redirectBack(res, url.searchParams.get('redirect_uri')!, url.searchParams.get('state')!)
    req.resume()
    other(url, res)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}
