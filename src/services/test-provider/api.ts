import { signRequest } from '../../../flows/lib/oauth1/index.js'
import { shorten } from '../walk/params.js'
import type { ProviderPreset } from './preset.js'

/** One API call made with a flow's result: what was sent (credentials shortened) and what came back. */
export interface ApiCall {
  request: { method: string; url: string; headers: Record<string, string> }
  response: { status: number; headers: Record<string, string>; body: unknown }
}

export interface Credentials {
  key: string
  secret: string
}

/** Calls the preset's API with the delivered token, the way that provider wants it sent. */
export async function callApi(
  preset: ProviderPreset,
  result: Readonly<Record<string, unknown>>,
  creds: Credentials,
): Promise<ApiCall> {
  const api = preset.api
  const url = new URL(api.url)
  const token = String(result.access_token ?? '')
  const headers: Record<string, string> = { accept: api.accept, 'user-agent': 'broker-test-provider', ...api.headers }
  if (api.send_token === 'query') url.searchParams.set(api.query_param, token)
  else if (api.send_token === 'header') headers.authorization = `${api.scheme} ${token}`
  else {
    const signed = signRequest(
      {
        consumerKey: creds.key,
        consumerSecret: creds.secret,
        signatureMethod: (preset.record.signature_method as 'HMAC-SHA1' | undefined) ?? 'HMAC-SHA1',
        token: { key: token, secret: String(result.access_secret ?? '') },
      },
      { method: api.method, url: url.toString() },
    )
    headers.authorization = signed.header
  }
  const res = await fetch(url, { method: api.method, headers, signal: AbortSignal.timeout(15_000) })
  const text = await res.text()
  return {
    request: {
      method: api.method,
      url: hideQueryToken(url, api.send_token === 'query' ? api.query_param : undefined),
      headers: hideAuthorization(headers),
    },
    response: { status: res.status, headers: Object.fromEntries(res.headers), body: parseBody(text) },
  }
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** The Authorization header as printed: the scheme, with the token (or OAuth 1 token and signature) shortened. */
function hideAuthorization(headers: Record<string, string>): Record<string, string> {
  const out = { ...headers }
  if (!out.authorization) return out
  out.authorization = out.authorization.startsWith('OAuth ')
    ? out.authorization.replace(
        /(oauth_token|oauth_signature)="([^"]*)"/g,
        (_m, k: string, v: string) => `${k}="${shorten(decodeURIComponent(v))}"`,
      )
    : out.authorization.replace(/^(\S+) (.+)$/, (_m, scheme: string, token: string) => `${scheme} ${shorten(token)}`)
  return out
}

function hideQueryToken(url: URL, param?: string): string {
  if (!param) return url.toString()
  const copy = new URL(url)
  copy.searchParams.set(param, shorten(copy.searchParams.get(param) ?? ''))
  return copy.toString().replace(/%E2%80%A6/g, '…')
}
