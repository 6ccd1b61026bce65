/**
 * The client a flow uses at an authorization server when its record names none: the broker's own,
 * registered there (RFC 7591) or described by a client ID metadata document. client.ts finds or
 * registers it (register.ts the registration, known.ts whether the server still knows a kept one);
 * problems.ts what a record without client_id cannot do; redirect.ts the broker's redirect URI and
 * document per issuer; fields.ts the client's fields laid over a record and delivered to the app.
 */
export { confirmUse, droppingInvalid, registeredClient } from './client.js'
export { type ClientFields, type RegisterIo, clientFields, withClient, withResource } from './fields.js'
export {
  clientCredentialsProblem,
  clientIdProblem,
  foreignAuthorizeProblem,
  keptClientProblem,
  ownEndpointProblems,
  refreshIssuerProblem,
  registers,
} from './problems.js'
export { type ClientDescription, clientDocument, documentUrl, issuerRedirect, usesDocument } from './redirect.js'
