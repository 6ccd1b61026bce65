/**
 * A record's authorization server as a flow uses it: metadata.ts reads an issuer's metadata (OpenID
 * Discovery, RFC 8414, cached per issuer); endpoints.ts merges it under the record's own fields and keeps
 * what /start found for /callback; checks.ts holds what the metadata gives to the deployment's rules.
 */
export { type DiscoveryOrder, type ProviderMetadata, discover } from './metadata.js'
export {
  type Endpoints,
  cachedEndpoints,
  discovers,
  endpoints,
  flag,
  pinEndpoints,
  pinnedEndpoints,
} from './endpoints.js'
export { checkedEndpoints, endpointProblems, metadataFieldProblems, usable } from './checks.js'
