// What serving reads of the config at run time, apart from schema.ts: a `serve` worker and the
// primary use these without loading zod and the schema (a lean worker, bench: resident memory).

/** Delivery modes a stored record may ask for; see docs/http-api.md, "Delivery". */
export const DELIVERY_MODES = ['query', 'form_post', 'code'] as const
export type DeliveryMode = (typeof DELIVERY_MODES)[number]

/**
 * Milliseconds a worker keeps serving after the word to stop, /ping answering 503: server.drainDelay,
 * else 5000 when the broker listens beyond loopback (a load balancer may be in front and must notice),
 * else 0 (nothing in front of a loopback listener would take it out; the delay only slows a Ctrl-C).
 */
export const drainDelayMs = (config: { listen: string; server: { drainDelay?: number } }): number =>
  config.server.drainDelay ?? (isLoopbackListen(config.listen) ? 0 : 5_000)

/** Whether a listen address reaches this machine only (127.0.0.0/8, ::1, localhost). */
export function isLoopbackListen(listen: string): boolean {
  const host = listen.replace(/^\[|\]$/g, '').toLowerCase()
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
}
