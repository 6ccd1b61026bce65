/* generated — do not edit; run npm run gen:fixture-types (scripts/fixture-types.ts) after changing
 * pdk/fixture.schema.json. pdk/fixture-types.test.ts fails while this file differs from what it writes. */

export type Phase =
  | 'init_worker'
  | 'certificate'
  | 'rewrite'
  | 'access'
  | 'balancer'
  | 'response'
  | 'header_filter'
  | 'body_filter'
  | 'timer'
  | 'log'
  | 'preread'
  | 'admin_api'

/**
 * One plugin phase scenario replayed by `broker pdk run`.
 */
export interface Fixture {
  $schema?: string
  name: string
  description?: string
  subsystem?: 'http' | 'stream'
  /**
   * @minItems 1
   */
  run_phases?: [Phase, ...Phase[]]
  config?: {
    trusted_ips?: string[]
    real_ip_header?: string
    real_ip_recursive?: boolean
    lua_max_req_headers?: number
    lua_max_resp_headers?: number
    lua_max_uri_args?: number
    lua_max_post_args?: number
    /**
     * Bytes, or an nginx size such as "8k" or "1m".
     */
    client_body_buffer_size?: number | string
    /**
     * Kong's list of "<external>:<listening>" strings, or an object from listening port to external port.
     */
    port_maps?:
      | string[]
      | {
          [k: string]: number
        }
    lua_transform_underscores_in_response_headers?: boolean
    telemetry_logs?: boolean
  }
  node?: {
    id?: string
    hostname?: string
    memory?: {
      lua_shared_dicts?: {
        [k: string]: {
          capacity: number
          allocated_slabs: number
          [k: string]: unknown
        }
      }
      workers_lua_vms?: {
        pid: number
        http_allocated_gc: number
        [k: string]: unknown
      }[]
    }
    statistics?: {
      [k: string]: number
    }
  }
  cluster?: {
    id?: string
  }
  route?: {
    [k: string]: unknown
  }
  service?: {
    [k: string]: unknown
  }
  consumers?: {
    [k: string]: unknown
  }[]
  /**
   * Upstream entities; service.set_upstream accepts their names.
   */
  upstreams?: {
    name: string
    [k: string]: unknown
  }[]
  credentials?: {
    [k: string]: unknown
  }[]
  consumer_groups?: {
    id: string
    name: string
    /**
     * IDs of the member consumers.
     */
    consumers?: string[]
    [k: string]: unknown
  }[]
  /**
   * Vaults by name, each a map of variable name to value (env-style), e.g. {"env": {"NAME": "value"}}.
   */
  vault?: {
    [k: string]: {
      [k: string]: string
    }
  }
  request: {
    /**
     * The request ID the gateway assigns (error bodies show it); default: derived from the fixture name.
     */
    id?: string
    method?: string
    /**
     * Scheme http, https, tcp or tls (any case); path and query are kept exactly as written.
     */
    url: string
    headers?: HeaderMap
    /**
     * A string is sent as is ("" is an explicit empty body, with Content-Length: 0); anything else as JSON.
     */
    body?: unknown
    /**
     * As request.get_http_version returns it; null for an unrecognized version.
     */
    http_version?: 0.9 | 1 | 1.1 | 2 | 3 | null
    client?: {
      ip?: string
      port?: number
    }
    /**
     * What the client presents when asked in the certificate phase: its PEM chain (client certificate first), as a string or as {client_certificate_chain}.
     */
    tls?:
      | string
      | {
          /**
           * PEM, client certificate first.
           */
          client_certificate_chain?: string
        }
  }
  upstream?: {
    status?: number
    headers?: HeaderMap
    body?: unknown
    /**
     * The service's body as the chunks Lua body_filter handlers see in ngx.arg[1] (their concatenation is the body; overrides body).
     *
     * @minItems 1
     */
    chunks?: [string, ...string[]]
  }
  /**
   * Answers to the HTTP calls Lua plugins make with resty.http (lua-resty-http), tried in order: the first entry whose request matches answers. A call no entry matches fails the fixture (PDK_OUTBOUND_UNMATCHED).
   */
  outbound?: OutboundEntry[]
  /**
   * More folders where `require` finds Lua modules for Lua plugins, relative to the fixture file (after the plugin's own root, before --lua-path and LUA_PATH).
   */
  lua_path?: string[]
  /**
   * Rows behind kong.db.<dao> and kong.cache for Lua plugins, as the Admin API takes them (foreign keys as { "id": … }, basic-auth passwords in clear).
   */
  db?: {
    [k: string]: {
      [k: string]: unknown
    }[]
  }
  /**
   * kong.configuration values for Lua plugins, over Kong's defaults (e.g. untrusted_lua).
   */
  kong_configuration?: {
    [k: string]: unknown
  }
  plugins: (ModulePlugin | CallScriptPlugin)[]
  expect?: Expectations
}
export interface HeaderMap {
  [k: string]: string | number | boolean | (string | number | boolean)[]
}
export interface OutboundEntry {
  request: OutboundRequest
  response: OutboundResponse | OutboundFailure
}
/**
 * What a resty.http call sends: `url` as scheme://host[:port]/path[?query] (the default port left out); `headers` a subset, names case-insensitive, null for absent; `body` a string (exact), a matcher, or JSON.
 */
export interface OutboundRequest {
  method?: string | Matcher
  url: string | Matcher
  headers?: {
    [k: string]: string | unknown[] | null | Matcher
  }
  body?: unknown
}
/**
 * A partial matcher: {"$type": "number"} (Lua type names: nil, boolean, number, string, table; or a list), {"$match": "regex"} on text, {"$contains": x} (a substring, a subset of a table, or elements of a list).
 */
export interface Matcher {
  $type?: string | string[]
  $match?: string
  $contains?: unknown
}
export interface OutboundResponse {
  status: number
  headers?: HeaderMap
  /**
   * A string is sent as is; anything else as JSON (with Content-Type: application/json unless headers say otherwise).
   */
  body?: unknown
}
export interface OutboundFailure {
  /**
   * The call answers nil and this error, as lua-resty-http does for a failed connection (e.g. "timeout", "connection refused").
   */
  error: string
}
export interface ModulePlugin {
  /**
   * The plugin's name; a Lua plugin's comes from its folder (a different name is an error).
   */
  name?: string
  id?: string
  /**
   * Path relative to the fixture file: a kong-js-pdk module (.js, .mjs, .ts), or a Kong Lua plugin's handler.lua or its folder (…/kong/plugins/<name>/).
   */
  module: string
  /**
   * Run this plugin on the real kong-js-pluginserver (or --plugin-server-cmd), as Kong 3.x does.
   */
  plugin_server?: boolean
  config?: {
    [k: string]: unknown
  }
}
export interface CallScriptPlugin {
  name: string
  id?: string
  config?: {
    [k: string]: unknown
  }
  phases: {
    [k: string]: ScriptCall[]
  }
}
export interface ScriptCall {
  call: string
  args?: unknown[]
  /**
   * Returned values; null for nil; trailing nulls may be left out; partial matchers ({"$type"}, {"$match"}, {"$contains"}) allowed anywhere.
   */
  returns?: unknown[]
  /**
   * A substring of the thrown message.
   */
  throws?: string
}
export interface Expectations {
  status?: number | Matcher
  headers?: {
    [k: string]: string | unknown[] | null | Matcher
  }
  body?: unknown
  source?: 'exit' | 'error' | 'service'
  /**
   * Each {level, contains} must match a log line (err ≡ error); an entry at level err states an expected error.
   */
  logs?: {
    level: string
    contains: string
  }[]
  /**
   * What the upstream saw; null means the request must not reach it.
   */
  upstream_request?: {
    method?: string | Matcher
    path?: string | Matcher
    query?: string | Matcher
    headers?: {
      [k: string]: string | unknown[] | null | Matcher
    }
    body?: unknown
  } | null
  /**
   * The resty.http requests the plugins made, in order, all of them: each entry is matched as an `outbound` request is (a subset of the headers, matchers allowed).
   */
  outbound?: OutboundRequest[]
  telemetry?: {
    [k: string]: unknown
  }[]
  /**
   * Log lines that must not appear: {contains} at any level, or {level, contains}.
   */
  no_logs?: {
    level?: string
    contains: string
  }[]
  /**
   * Errors the scenario expects, each a substring of an [error] log line or of a plugin exception. Any other error fails the fixture.
   */
  errors?: string[]
}
