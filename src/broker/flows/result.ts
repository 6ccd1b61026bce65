import { BrokerError } from '../../errors.js'
import type { BrokerDeps } from '../deps.js'

/** POST /result: redeems a one-time result code (delivery `code`) once. */
export async function redeemResult(deps: BrokerDeps, code: string | undefined): Promise<Record<string, unknown>> {
  if (!code)
    throw new BrokerError('VALIDATION', 'The result code is required (field "result" or "code").', {
      fields: { result: 'is required' },
    })
  const result = await deps.store.takeResult(code)
  if (!result) throw new BrokerError('UNKNOWN_RESULT', 'No result under this code: it was redeemed already or expired.')
  return result
}
