import type { Redis } from 'ioredis'
import { CAS_SCRIPT, CLAIM_SCRIPT, UNCLAIM_SCRIPT, UNMOVE_SCRIPT } from './flow-codec.js'

/** A client that runs flow-codec.ts's Lua scripts as commands of their own. */
export type ScriptedRedis = Redis & {
  brokerCas(
    key: string,
    from: string,
    to: string,
    body: string,
    found: '0' | '1',
    lease: string,
  ): Promise<string | number>
  brokerClaim(key: string, waitMs: number): Promise<string | null>
  brokerUnclaim(key: string, was: string, ms: number, maxTtl: number): Promise<number>
  brokerUnmove(key: string, movedHeader: string, wasHeader: string): Promise<number>
}

/** `redis` with the flow scripts defined on it (once per client: every flow store on it shares them). */
export function scripted(redis: Redis): ScriptedRedis {
  if (!('brokerCas' in redis)) {
    redis.defineCommand('brokerCas', { numberOfKeys: 1, lua: CAS_SCRIPT })
    redis.defineCommand('brokerClaim', { numberOfKeys: 1, lua: CLAIM_SCRIPT })
    redis.defineCommand('brokerUnclaim', { numberOfKeys: 1, lua: UNCLAIM_SCRIPT })
    redis.defineCommand('brokerUnmove', { numberOfKeys: 1, lua: UNMOVE_SCRIPT })
  }
  return redis as ScriptedRedis
}
