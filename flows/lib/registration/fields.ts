import type { FlowContext, FlowRecord, Registration } from '../../contract.js'

/** What registering needs of a step's context (or of /store's io). */
export type RegisterIo = Pick<FlowContext, 'record' | 'callbackUrl' | 'http' | 'registrations'>

/** The client fields a registration puts into a flow's record (and a flow's saved data). */
export interface ClientFields {
  client_id: string
  client_secret?: string
  client_auth: string
  /** The code flow client's redirect URI: the broker's callback URL for this issuer alone (issuerRedirect). */
  redirect_uri?: string
  /** No flow has used it yet: its first successful token request confirms it (confirmUse). */
  unused?: true
}

/** A registered client's fields, ready to lay over the record. */
export function clientFields(kept: Registration): ClientFields {
  const secret = kept.client_secret
  const method = kept.token_endpoint_auth_method ?? (secret ? 'client_secret_basic' : 'none')
  return {
    client_id: kept.client_id,
    ...(secret ? { client_secret: secret } : {}),
    client_auth: secret ? method : 'none',
    ...(kept.unused ? { unused: true as const } : {}),
  }
}

/** The step's context with a registered client laid over its record (unchanged without one). */
export function withClient<C extends { record: Readonly<FlowRecord> }>(ctx: C, client: ClientFields | undefined): C {
  if (!client) return ctx
  const { redirect_uri: _, unused: __, ...fields } = client
  return { ...ctx, record: { ...ctx.record, ...fields } }
}

/**
 * What the app gets besides the token answer: the `resource` it named, the authorization server that
 * issued the tokens (when the broker found it from the resource), the client_id the broker registered,
 * the user's profile.
 */
export function withResource(
  deliver: Record<string, unknown>,
  record: Readonly<FlowRecord>,
  client: ClientFields | undefined,
  profile?: Record<string, unknown>,
  issuer?: string,
): Record<string, unknown> {
  const out = { ...deliver }
  if (typeof record.resource === 'string') out.resource = record.resource
  if (issuer) out.issuer = issuer
  if (client) out.client_id = client.client_id
  if (profile) out.profile = profile
  // The app's own state stays last, as deliverable puts it.
  if (record.state !== undefined) {
    delete out.state
    out.state = record.state
  }
  return out
}
