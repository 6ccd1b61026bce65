import { brokerError } from '../../errors/index.js'
import type { BrokerDeps } from '../deps.js'

/** POST /result: redeems a one-time result code (delivery `code`) once. */
export async function redeemResult(deps: BrokerDeps, code: string | undefined): Promise<Record<string, unknown>> {
  if (!code) throw brokerError('resultRequired')
  const result = await deps.store.takeResult(code)
  if (!result) throw brokerError('unknownResult')
  return result
}
