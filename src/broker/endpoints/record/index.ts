/** A /store body's record: parsed (parse.ts), validated (validate.ts), and what its plugin may use at /store (at-store.ts). */
export { sanitizeRecord } from './parse.js'
export { callbackAllowed, validateRecord } from './validate.js'
export { atStoreError, storeIo } from './at-store.js'
