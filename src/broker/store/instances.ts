import { createHash, createHmac } from 'node:crypto'
import type { Redis } from 'ioredis'
import { brokerError } from '../../errors/index.js'

/**
 * Broker instances sharing one Redis (and one store.prefix) must share session.secret: a flow's
 * hash is derived from its state under it, so an instance with another secret answers every flow
 * the other started as unknown. Nothing failed loudly when two instances each generated their own
 * (issue 23). Every broker connection is named (CLIENT SETNAME, ioredis's `connectionName`) by a
 * digest of its prefix and a keyed fingerprint of its secret, which reveals neither; a starting
 * instance reads the names (CLIENT LIST) and refuses to run beside one it cannot share flows with.
 */
export interface InstanceName {
  /** The connection name: `broker.<prefix digest>.<g|s><secret fingerprint>`. */
  readonly name: string
  /** Whether the secret was generated for this run (no other instance can have it). */
  readonly generated: boolean
}

const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 10)

/** The name this instance's connections carry. */
export function instanceName(prefix: string, sessionSecret: string, generated: boolean): InstanceName {
  const fingerprint = createHmac('sha256', sessionSecret).update('broker instance').digest('base64url').slice(0, 16)
  return { name: `broker.${digest(prefix)}.${generated ? 'g' : 's'}${fingerprint}`, generated }
}

/**
 * Refuses (CONFIG_INVALID) when another instance on this Redis and prefix cannot share flows with
 * this one: any other, when this one's secret was generated; one with a generated secret otherwise.
 * A Redis that does not allow CLIENT LIST (an ACL) is not checked: `false` is returned to say so.
 */
export async function checkOtherInstances(redis: Redis, me: InstanceName, prefix: string): Promise<boolean> {
  let list: string
  try {
    list = (await redis.client('LIST')) as string
  } catch {
    return false
  }
  const mine = `broker.${digest(prefix)}.`
  const others = [...list.matchAll(/\bname=(\S+)/g)]
    .map((m) => m[1]!)
    .filter((name) => name.startsWith(mine) && name !== me.name)
  const clash = me.generated ? others[0] : others.find((name) => name.slice(mine.length).startsWith('g'))
  if (clash) throw brokerError('sessionSecretNotShared', { prefix, generated: me.generated })
  return true
}
