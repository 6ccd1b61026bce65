/**
 * DPoP (RFC 9449) as a flow uses it: key.ts is the flow's key (the record's, or one the broker makes) and
 * what /store checks of it; proof.ts signs a proof for each request and sends it, with the server's nonce.
 */
export { type DpopKey, dpopAlg, dpopProblems, flowDpop, parsePrivateKey, wantsDpop } from './key.js'
export { dpopProof, sendWithDpop } from './proof.js'
