// oidc-provider ships no types; what the tests use of it.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http'

  /** The slice of Koa's context the tests' middleware reads and writes. */
  export interface ProviderContext {
    method: string
    path: string
    status: number
    body: unknown
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Record<string, unknown>)
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>
    use(middleware: (ctx: ProviderContext, next: () => Promise<void>) => Promise<void>): void
  }
}
