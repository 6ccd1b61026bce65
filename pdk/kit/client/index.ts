/** pdk.client: the connected client, its forwarded address and its authentication state. */
import type { Context, Table } from '../context.js'
import { checkPhase, KONG, phaseRule, phaseSet, SETS } from '../private/phases.js'
import { trustMatcher } from '../ip.js'
import { values, type Values } from '../private/values.js'

// Kong: anywhere but init_worker (admin_api too); the reference lists set B
const ADDRESS = phaseRule({ except: phaseSet('init_worker') }, SETS.B)
const C = phaseRule(KONG.auth_and_later, SETS.C)
const ACCESS = phaseRule(phaseSet('access'))

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
// any JSON object or array is a Lua table ([] and {} are the same empty table)
const isTableOrNil = (v: unknown) => v === undefined || v === null || typeof v === 'object'

/** Builds pdk.client for a request context. */
export function createClient(ctx: Context) {
  const api = {
    get_ip(): string {
      checkPhase(ctx, ADDRESS)
      return ctx.request.peer.ip
    },
    get_port(): number {
      checkPhase(ctx, ADDRESS)
      return ctx.request.peer.port
    },
    get_forwarded_ip(): string {
      checkPhase(ctx, ADDRESS)
      return ctx.forwarded.ip
    },
    get_forwarded_port(): number | undefined {
      checkPhase(ctx, ADDRESS)
      return ctx.forwarded.port
    },
    get_credential(): Table | undefined {
      checkPhase(ctx, C)
      return ctx.auth.credential
    },
    get_consumer(): Table | undefined {
      checkPhase(ctx, C)
      return ctx.auth.consumer
    },
    authenticate(consumer?: Table | null, credential?: Table | null): void {
      checkPhase(ctx, ACCESS)
      if (!isTableOrNil(consumer)) throw new Error('consumer must be a table or nil')
      if (!isTableOrNil(credential)) throw new Error('credential must be a table or nil')
      if ((consumer === undefined || consumer === null) && (credential === undefined || credential === null)) {
        throw new Error('either credential or consumer must be provided')
      }
      ctx.auth.consumer = consumer ?? undefined
      ctx.auth.credential = credential ?? undefined
      const consumerId = (consumer?.id ?? credential?.consumer_id) as string | undefined
      if (consumerId !== undefined) {
        const groups = groupsOf(ctx, consumerId)
        if (groups) ctx.auth.groups = groups
      }
    },
    authenticate_consumer_group_by_consumer_id(consumer_id?: string | null): void {
      checkPhase(ctx, ACCESS)
      if (consumer_id !== undefined && consumer_id !== null && typeof consumer_id !== 'string') {
        throw new Error('consumer_id must be a string or nil')
      }
      if (consumer_id === undefined || consumer_id === null || ctx.auth.groups !== undefined) return
      const groups = groupsOf(ctx, consumer_id)
      if (groups) ctx.auth.groups = groups
    },
    get_consumer_group(): Table | undefined {
      checkPhase(ctx, C)
      return ctx.auth.groups?.[0]
    },
    get_consumer_groups(): Table[] | undefined {
      checkPhase(ctx, C)
      return ctx.auth.groups
    },
    set_authenticated_consumer_group(group?: Table | null): void {
      checkPhase(ctx, C)
      if (!isTableOrNil(group)) throw new Error('group must be a table or nil')
      ctx.auth.groups = group ? [group] : undefined
    },
    set_authenticated_consumer_groups(groups?: Table[] | null): void {
      checkPhase(ctx, C)
      if (groups !== undefined && groups !== null && typeof groups !== 'object')
        throw new Error('groups must be a table or nil')
      if (groups) {
        for (const g of Object.values(groups)) {
          if (typeof g !== 'object' || g === null || g.id === undefined || g.name === undefined) {
            throw new Error('each consumer group must be a table with an id and a name')
          }
        }
      }
      ctx.auth.groups = groups ? [...Object.values(groups)] : undefined
    },
    get_protocol(allow_terminated?: boolean): string | Values {
      checkPhase(ctx, C)
      const route = ctx.data.route
      if (!route) return values(undefined, 'No active route found')
      const protocols = (route.protocols as string[] | undefined) ?? ['http', 'https']
      if (protocols.length === 1) return protocols[0]!
      if (ctx.subsystem === 'http') {
        if (ctx.request.scheme === 'https') return 'https'
        const trusted = trustMatcher(ctx.config.trusted_ips)(ctx.request.peer.ip)
        if (allow_terminated && trusted) {
          // nginx joins repeated headers with ", "; Kong refuses more than one value
          const proto = ctx.request.headers.all('x-forwarded-proto').join(', ')
          if (proto.includes(',')) return values(undefined, 'Only one X-Forwarded-Proto header allowed')
          if (proto.toLowerCase() === 'https') return 'https'
        }
        return 'http'
      }
      return ctx.request.scheme === 'tls' ? 'tls' : 'tcp'
    },
    load_consumer(consumer_id: string, search_by_username?: boolean): Table | Values | undefined {
      checkPhase(ctx, C)
      if (typeof consumer_id !== 'string' || consumer_id === '') throw new Error('consumer_id must be a string')
      if (!UUID.test(consumer_id) && !search_by_username)
        throw new Error('cannot load a consumer with an id that is not a uuid')
      const byId = UUID.test(consumer_id) ? ctx.data.consumers.find((c) => c.id === consumer_id) : undefined
      if (byId) return structuredClone(byId)
      if (search_by_username) {
        const byName = ctx.data.consumers.find((c) => c.username === consumer_id)
        return byName ? structuredClone(byName) : undefined
      }
      return undefined
    },
  }
  return api
}

/** The groups of a consumer, sorted by group name (Kong's lookup); undefined when none. */
function groupsOf(ctx: Context, consumerId: string): Table[] | undefined {
  const ids = new Set(ctx.data.groupMembers[consumerId] ?? [])
  const groups = ctx.data.consumerGroups
    .filter((g) => ids.has(g.id as string))
    .sort((a, b) => String(a.name).localeCompare(String(b.name)))
  return groups.length ? groups.map((g) => ({ ...g })) : undefined
}
