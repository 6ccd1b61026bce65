/** OAuth 1.0a helpers shared by the built-in OAuth 1.0a flows (RFC 5849). */
export { normalizeOAuth1, signerOf, validateOAuth1 } from './record.js'
export {
  baseUri,
  formParams,
  isFormBody,
  percentEncode,
  queryParams,
  readPrivateKey,
  SIGNATURE_METHODS,
  signRequest,
} from './sign.js'
export type { Param, SignatureMethod, Signed, Signer, SignRequest } from './sign.js'
export { accessResult, credentialsFromAnswer, formFields, requestCredentials } from './tokens.js'
export type { Credentials } from './tokens.js'
export { answersDirectly, requestToSign } from './request.js'
export type { RequestToSign } from './request.js'
