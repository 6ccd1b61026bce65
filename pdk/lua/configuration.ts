/** kong.configuration for Lua plugins: Kong's defaults for what plugins read, the fixture's settings over them. */
import type { Fixture } from '../fixture/index.js'

/** Defaults as Kong's kong.conf.default gives them (the keys bundled plugins read). */
export const KONG_DEFAULTS: Readonly<Record<string, unknown>> = Object.freeze({
  database: 'off',
  role: 'traditional',
  log_level: 'notice',
  prefix: '/usr/local/kong',
  untrusted_lua: 'sandbox',
  untrusted_lua_sandbox_requires: [],
  untrusted_lua_sandbox_environment: [],
  headers: ['server_tokens', 'latency_tokens', 'X-Kong-Request-Id'],
  trusted_ips: [],
  real_ip_header: 'X-Real-IP',
  real_ip_recursive: 'off',
  client_max_body_size: '0',
  client_body_buffer_size: '8k',
  nginx_http_client_max_body_size: '0',
  lua_ssl_trusted_certificate: [],
  loaded_plugins: {},
  // as Kong's configuration loader expands `headers`: server_tokens enables Via and Server, latency_tokens the latencies
  enabled_headers: {
    server_tokens: true,
    latency_tokens: true,
    'X-Kong-Request-Id': true,
    Via: true,
    Server: true,
    'X-Kong-Proxy-Latency': true,
    'X-Kong-Response-Latency': true,
    'X-Kong-Admin-Latency': true,
    'X-Kong-Upstream-Latency': true,
  },
  router_flavor: 'traditional_compatible',
  dns_no_sync: false,
  worker_consistency: 'eventual',
  mem_cache_size: '128m',
  // stream_listen = off: broker has no stream subsystem (prometheus's /metrics asks it for metrics when listed)
  stream_listeners: [],
})

/** The configuration a fixture's Lua plugins see. */
export function kongConfiguration(f: Fixture): Record<string, unknown> {
  const fromConfig: Record<string, unknown> = {}
  if (f.config?.trusted_ips) fromConfig.trusted_ips = f.config.trusted_ips
  if (f.config?.real_ip_header) fromConfig.real_ip_header = f.config.real_ip_header
  if (f.config?.real_ip_recursive !== undefined)
    fromConfig.real_ip_recursive = f.config.real_ip_recursive ? 'on' : 'off'
  return { ...KONG_DEFAULTS, ...fromConfig, ...(f.kong_configuration ?? {}) }
}
