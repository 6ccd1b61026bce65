import { FlowError, type StoreIo } from '../../../../flows/contract.js'
import type { BrokerConfig } from '../../../config/schema.js'
import { brokerError } from '../../../errors/index.js'
import { allowedDestination, providerFetch } from '../../flow/context.js'

/** What a plugin may use at /store: the guarded fetch of every flow step, and the deployment's URL rules. */
export function storeIo(config: Readonly<BrokerConfig>): StoreIo {
  return {
    http: storeHttp(config),
    // providers.allow, and address literals the policy refuses: the same rules as the record's own URLs.
    allowed: allowedDestination,
  }
}

/** The guarded fetch of every flow step, bounded by provider.timeout. */
export const storeHttp =
  (config: Readonly<BrokerConfig>): StoreIo['http'] =>
  (url, request) =>
    providerFetch(url, request, config.provider.timeout)

/** A provider's failure at /store is the provider's error (502/504), not the record's; anything else as it is. */
export function atStoreError(err: unknown): unknown {
  if (!(err instanceof FlowError)) return err
  const id =
    err.brokerCode === 'PROVIDER_NOT_ALLOWED'
      ? 'providerRefusedAtStore'
      : err.brokerCode === 'PROVIDER_TIMEOUT'
        ? 'providerTimeoutAtStore'
        : 'providerFailedAtStore'
  return brokerError(id, { message: err.description })
}
