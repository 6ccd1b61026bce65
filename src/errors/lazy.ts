import type { BrokerError, MessageArgs, MessageId } from './index.js'

/**
 * `brokerError`, with the registry loaded only when something fails: for `broker serve`'s primary,
 * which otherwise loads no message of it (bench: the primary's resident memory).
 */
export async function lazyBrokerError<Id extends MessageId>(id: Id, ...values: MessageArgs<Id>): Promise<BrokerError> {
  const { brokerError } = await import('./index.js')
  return brokerError(id, ...values)
}

/** `isBrokerError`, loading the registry only when asked (an error is being handled). */
export async function lazyIsBrokerError(err: unknown): Promise<boolean> {
  return (await import('./index.js')).isBrokerError(err)
}
