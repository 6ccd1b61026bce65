/**
 * Kong's plugin scoping for a proxied request: of the instances of one plugin name configured
 * globally or on the route, service or consumer (and their combinations), one runs, the most
 * specific: route+service+consumer, route+consumer, service+consumer, route+service, consumer,
 * route, service, global. Rewrite runs only global instances (Kong has not routed yet); access
 * picks each name's instance when the plugin is reached, so a consumer a higher-priority plugin
 * authenticated counts; later phases run what access picked (global ones when access never ran, as on a
 * request no route matched).
 */

type Row = { id: string; [k: string]: unknown }

const idOf = (v: unknown): string | undefined =>
  v && typeof v === 'object' ? ((v as Row).id as string | undefined) : undefined

/** Kong's order of the combinations, most specific first: [route, service, consumer]. */
const COMBOS: Array<[boolean, boolean, boolean]> = [
  [true, true, true],
  [true, false, true],
  [false, true, true],
  [true, true, false],
  [false, false, true],
  [true, false, false],
  [false, true, false],
  [false, false, false],
]

/** The enabled plugin rows that may apply to a request on this route and service (any consumer). */
export function candidates<R extends Row>(plugins: readonly R[], route: Row, service: Row | undefined): R[] {
  return plugins.filter((p) => {
    if (p.enabled === false) return false
    const r = idOf(p.route)
    const s = idOf(p.service)
    return (!r || r === route.id) && (!s || s === service?.id)
  })
}

/** The enabled plugin rows Kong runs on a request no route matched: the global ones (no route, service or consumer). */
export function globals<R extends Row>(plugins: readonly R[]): R[] {
  return plugins.filter((p) => p.enabled !== false && !idOf(p.route) && !idOf(p.service) && !idOf(p.consumer))
}

/** The instance of one plugin name Kong picks for a route, service and consumer, if any. */
export function pick<R extends Row>(
  rows: readonly R[],
  route: Row | undefined,
  service: Row | undefined,
  consumer: string | undefined,
): R | undefined {
  for (const [r, s, c] of COMBOS) {
    if ((r && !route) || (s && !service) || (c && !consumer)) continue
    const found = rows.find(
      (p) =>
        (r ? idOf(p.route) === route!.id : !idOf(p.route)) &&
        (s ? idOf(p.service) === service!.id : !idOf(p.service)) &&
        (c ? idOf(p.consumer) === consumer : !idOf(p.consumer)),
    )
    if (found) return found
  }
  return undefined
}

const GLOBAL_ONLY = new Set(['certificate', 'rewrite'])

/** One request's choices: whether an instance runs in a phase, as Kong's plugins iterator decides. */
export class Scoping<R extends Row> {
  private readonly picked = new Map<string, R | undefined>()
  private collecting = false

  constructor(
    private readonly rows: readonly R[],
    private readonly route: Row | undefined,
    private readonly service: Row | undefined,
  ) {}

  /** Whether the instance `row` of plugin `name` runs in `phase`, the consumer being `consumer` now. */
  runs(row: R, name: string, phase: string, consumer: string | undefined): boolean {
    if (GLOBAL_ONLY.has(phase)) return !idOf(row.route) && !idOf(row.service) && !idOf(row.consumer)
    if (phase === 'access' || phase === 'preread') this.collecting = true
    if (!this.collecting) return pick(this.same(name), undefined, undefined, undefined) === row
    if (!this.picked.has(name)) this.picked.set(name, pick(this.same(name), this.route, this.service, consumer))
    return this.picked.get(name) === row
  }

  private same(name: string): R[] {
    return this.rows.filter((p) => String(p.name) === name)
  }
}
