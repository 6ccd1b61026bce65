/** The client registrations a flow step may keep and read (RFC 7591), part of the plugin contract. */

/** A client the broker registered itself at an authorization server (RFC 7591 §3.2.1). */
export interface Registration {
  client_id: string
  /** Secret: kept sealed, never shown or logged. */
  client_secret?: string
  /** The method the server agreed to (`none`, `client_secret_basic` …). */
  token_endpoint_auth_method?: string
  /** Secret: lets the client manage its registration (RFC 7592). */
  registration_access_token?: string
  /** Where the client's registration is read (RFC 7592 §2.1), with the registration_access_token. */
  registration_client_uri?: string
  /** Seconds since the epoch when the client secret expires; 0 or absent: never. */
  client_secret_expires_at?: number
  /** No flow has used it yet: kept briefly, until `confirm` (its first successful token request). */
  unused?: true
}

/**
 * The grant a registered client is for: the code flow (with the broker's redirect URI, and refresh) by
 * default, or client credentials (a confidential client without redirect URIs).
 */
export type RegistrationGrant = 'authorization_code' | 'client_credentials'

/**
 * Where the broker keeps its registrations: sealed in the store, one per authorization server
 * (issuer), redirect URI and grant, until `expiresAt` (ms since the epoch) or the broker's registration.ttl.
 */
export interface Registrations {
  /** The `client_name` of every client the broker registers: the deployment's (registration.clientName), never a record's. */
  readonly clientName: string
  /** Seconds a kept client the server answered for is trusted before the broker asks again (registration.recheck). */
  readonly recheckSeconds: number
  get(issuer: string, redirectUri: string, grant?: RegistrationGrant): Promise<Registration | undefined>
  put(
    issuer: string,
    redirectUri: string,
    registration: Registration,
    expiresAt?: number,
    grant?: RegistrationGrant,
  ): Promise<void>
  drop(issuer: string, redirectUri: string, grant?: RegistrationGrant): Promise<void>
  /** Before registering anew at `issuer`: throws a FlowError when its host has had as many as the deployment allows. */
  admitNew(issuer: string): Promise<void>
  /** After a registration's first successful token request: kept for its whole lifetime from now. */
  confirm(issuer: string, redirectUri: string, grant?: RegistrationGrant): Promise<void>
  /** The authorization server a kept registration has this client_id at, if any. */
  owner(clientId: string): Promise<string | undefined>
  /**
   * Links a protected resource to the authorization server whose tokens for it were delivered (the first
   * link stays until it lapses, renewed by each delivery); returns the server it is linked to.
   */
  bindResource(resource: string, redirectUri: string, issuer: string): Promise<string>
  /** The authorization server a protected resource is linked to by bindResource, if any. */
  resourceIssuer(resource: string, redirectUri: string): Promise<string | undefined>
}
