/**
 * nginx's variables (`ngx.var.<name>`) in Kong: those of the nginx modules Kong's OpenResty is built with (the
 * http core, upstream, proxy, SSL, realip, HTTP/2, stub_status and nginx's default modules), of
 * lua-kong-nginx-module and of Kong's nginx template. pdk/lua/host/vars.ts answers the emulated and fallback
 * ones (manifest.test.ts holds the two lists equal); see types.ts for the statuses.
 */
import type { NginxVariable, VariableStatus } from './types.js'

type Row = readonly [name: string, status: VariableStatus, doc: string]

const group = (from: string, rows: readonly Row[]): NginxVariable[] =>
  rows.map(([name, status, doc]) => ({ name, status, from, doc }))

const CORE: readonly Row[] = [
  ['args', 'emulated', 'the query the service receives (writable; nil when the request has none)'],
  ['arg_*', 'emulated', 'an argument of the query the service receives, decoded as nginx decodes it'],
  ['binary_remote_addr', 'emulated', 'the client address in 4 or 16 bytes'],
  ['body_bytes_sent', 'emulated', "the answer's body length in the log phase, 0 before"],
  ['bytes_sent', 'emulated', 'status line, headers and body in the log phase, 0 before'],
  ['connection', 'fallback', '`1`: a connection is one request'],
  ['connection_requests', 'fallback', '`1`'],
  ['connection_time', 'fallback', 'the time since the request began'],
  ['content_length', 'emulated', "the request's `Content-Length`"],
  ['content_type', 'emulated', "the request's `Content-Type`"],
  ['cookie_*', 'emulated', 'a cookie of the request'],
  ['document_root', 'not emulated', 'Kong serves no files from a root'],
  ['document_uri', 'emulated', 'the same as `uri`'],
  ['host', 'emulated', "the request's host"],
  ['hostname', 'emulated', "the host's name"],
  ['http_*', 'emulated', 'a request header as plugins left it (`http_x_api_key`)'],
  ['https', 'emulated', '`on` over TLS, else empty'],
  ['is_args', 'emulated', '`?` when the query is not empty'],
  ['limit_rate', 'emulated', '`0` (writable)'],
  ['msec', 'emulated', 'the time in seconds, to the millisecond'],
  ['nginx_version', 'emulated', "`1.25.3`, Kong 3.9's"],
  ['pid', 'emulated', 'the process id'],
  ['pipe', 'not emulated', 'whether the request was pipelined'],
  ['proxy_protocol_addr', 'emulated', 'empty: no PROXY protocol listener'],
  ['proxy_protocol_port', 'emulated', 'empty'],
  ['proxy_protocol_server_addr', 'not emulated', "a PROXY protocol header's server address"],
  ['proxy_protocol_server_port', 'not emulated', "a PROXY protocol header's server port"],
  ['proxy_protocol_tlv_*', 'not emulated', 'a PROXY protocol TLV'],
  ['query_string', 'emulated', 'the same as `args`'],
  ['realpath_root', 'not emulated', 'Kong serves no files from a root'],
  ['remote_addr', 'emulated', 'the client address (after real-IP processing)'],
  ['remote_port', 'emulated', 'the client port'],
  ['remote_user', 'emulated', "a Basic `Authorization` header's user"],
  ['request', 'emulated', 'the request line'],
  ['request_body', 'emulated', 'the request body, nil when empty'],
  ['request_body_file', 'not emulated', 'a replay keeps the body in memory'],
  ['request_completion', 'not emulated', '`OK` once the request completed'],
  ['request_filename', 'not emulated', 'Kong serves no files from a root'],
  ['request_id', 'emulated', 'the request id (the one error bodies carry)'],
  ['request_length', 'emulated', 'request line, headers and body'],
  ['request_method', 'emulated', 'the method'],
  ['request_time', 'emulated', 'the seconds since the request began'],
  ['request_uri', 'emulated', 'path and query as the client sent them'],
  ['scheme', 'emulated', '`http` or `https`'],
  ['sent_http_*', 'emulated', 'a header of the answer as it stands'],
  ['sent_trailer_*', 'not emulated', 'a trailer of the answer'],
  ['server_addr', 'fallback', '`127.0.0.1`'],
  ['server_name', 'emulated', "`kong`, as Kong's template names its server"],
  ['server_port', 'emulated', 'the port the request came to'],
  ['server_protocol', 'emulated', '`HTTP/1.1`, `HTTP/2.0` …'],
  ['status', 'emulated', "the answer's status"],
  ['tcpinfo_rcv_space', 'not emulated', 'a replay has no TCP connection'],
  ['tcpinfo_rtt', 'not emulated', 'a replay has no TCP connection'],
  ['tcpinfo_rttvar', 'not emulated', 'a replay has no TCP connection'],
  ['tcpinfo_snd_cwnd', 'not emulated', 'a replay has no TCP connection'],
  ['time_iso8601', 'emulated', 'the time, ISO 8601'],
  ['time_local', 'emulated', 'the time, in the log format (UTC)'],
  ['uri', 'emulated', 'the path, decoded (`ngx.req.set_uri` changes it)'],
]

const UPSTREAM: readonly Row[] = [
  ['upstream_addr', 'emulated', "the service's `host:port` once it has answered, nil before"],
  ['upstream_bytes_received', 'emulated', "the service's status line, headers and body"],
  ['upstream_bytes_sent', 'emulated', 'the request line, headers and body sent to the service'],
  ['upstream_cache_status', 'not emulated', "Kong proxies without nginx's cache"],
  ['upstream_connect_time', 'fallback', '`0.000` once the service has answered, nil before'],
  ['upstream_cookie_*', 'emulated', 'a cookie the service set'],
  ['upstream_header_time', 'fallback', '`0.000` once the service has answered'],
  ['upstream_http_*', 'emulated', "a header of the service's answer"],
  ['upstream_queue_time', 'not emulated', 'the time waiting for a free upstream connection'],
  ['upstream_response_length', 'emulated', "the service's body length"],
  ['upstream_response_time', 'fallback', '`0.000` once the service has answered'],
  ['upstream_status', 'emulated', "the service's status"],
  ['upstream_trailer_*', 'not emulated', "a trailer of the service's answer"],
]

const PROXY: readonly Row[] = [
  ['proxy_add_x_forwarded_for', 'not emulated', 'Kong sends `upstream_x_forwarded_for`, which is emulated'],
  ['proxy_host', 'not emulated', 'the service host as proxy_pass names it'],
  ['proxy_port', 'not emulated', 'the service port as proxy_pass names it'],
]

const SSL: readonly Row[] = [
  ['ssl_alpn_protocol', 'not emulated', 'the protocol ALPN chose'],
  ['ssl_cipher', 'fallback', '`TLS_AES_256_GCM_SHA384` over TLS, nil otherwise'],
  ['ssl_ciphers', 'not emulated', "the client's ciphers"],
  ['ssl_client_cert', 'not emulated', 'the client certificate, PEM with tabs (`ssl_client_raw_cert` is emulated)'],
  ['ssl_client_escaped_cert', 'not emulated', 'the client certificate, URL-encoded PEM'],
  ['ssl_client_fingerprint', 'not emulated', "the client certificate's SHA1 fingerprint"],
  ['ssl_client_i_dn', 'not emulated', "the client certificate's issuer"],
  ['ssl_client_i_dn_legacy', 'not emulated', "the client certificate's issuer (legacy form)"],
  ['ssl_client_raw_cert', 'emulated', "the first certificate of the fixture's client chain, PEM"],
  ['ssl_client_s_dn', 'not emulated', "the client certificate's subject"],
  ['ssl_client_s_dn_legacy', 'not emulated', "the client certificate's subject (legacy form)"],
  ['ssl_client_serial', 'not emulated', "the client certificate's serial number"],
  ['ssl_client_v_end', 'not emulated', "the client certificate's end date"],
  ['ssl_client_v_remain', 'not emulated', 'the days until the client certificate expires'],
  ['ssl_client_v_start', 'not emulated', "the client certificate's start date"],
  ['ssl_client_verify', 'emulated', '`SUCCESS` with a client chain, `NONE` without, over TLS'],
  ['ssl_curve', 'not emulated', 'the key exchange curve'],
  ['ssl_curves', 'not emulated', "the client's curves"],
  ['ssl_early_data', 'not emulated', '`1` for TLS 1.3 early data'],
  ['ssl_protocol', 'fallback', '`TLSv1.3` over TLS, nil otherwise'],
  ['ssl_server_name', 'emulated', "the SNI: the request's host, over TLS"],
  ['ssl_session_id', 'not emulated', 'the TLS session id'],
  ['ssl_session_reused', 'fallback', '`.` over TLS (a new session)'],
]

const OTHER_MODULES: readonly [string, readonly Row[]][] = [
  [
    'realip',
    [
      ['realip_remote_addr', 'emulated', 'the peer address before real-IP processing'],
      ['realip_remote_port', 'emulated', 'the peer port'],
    ],
  ],
  ['http_v2', [['http2', 'emulated', '`h2` or `h2c` for HTTP/2, else empty']]],
  [
    'stub_status',
    [
      ['connections_active', 'not emulated', "nginx's connection counters"],
      ['connections_reading', 'not emulated', "nginx's connection counters"],
      ['connections_waiting', 'not emulated', "nginx's connection counters"],
      ['connections_writing', 'not emulated', "nginx's connection counters"],
    ],
  ],
  ['gzip', [['gzip_ratio', 'not emulated', 'Kong does not gzip answers']]],
  [
    'ssi',
    [
      ['date_gmt', 'not emulated', 'server-side includes'],
      ['date_local', 'not emulated', 'server-side includes'],
    ],
  ],
  [
    'userid',
    [
      ['uid_got', 'not emulated', "nginx's userid cookies"],
      ['uid_reset', 'not emulated', "nginx's userid cookies"],
      ['uid_set', 'not emulated', "nginx's userid cookies"],
    ],
  ],
  ['referer', [['invalid_referer', 'not emulated', "nginx's valid_referers"]]],
  [
    'limit_conn, limit_req',
    [
      ['limit_conn_status', 'not emulated', "nginx's own limits (Kong limits in plugins)"],
      ['limit_req_status', 'not emulated', "nginx's own limits (Kong limits in plugins)"],
    ],
  ],
  [
    'fastcgi',
    [
      ['fastcgi_path_info', 'not emulated', 'Kong speaks no FastCGI'],
      ['fastcgi_script_name', 'not emulated', 'Kong speaks no FastCGI'],
    ],
  ],
  [
    'browser',
    [
      ['ancient_browser', 'not emulated', "nginx's browser detection"],
      ['modern_browser', 'not emulated', "nginx's browser detection"],
      ['msie', 'not emulated', "nginx's browser detection"],
    ],
  ],
  ['lua-kong-nginx-module', [['kong_request_id', 'emulated', 'the request id (the one error bodies carry)']]],
]

/** Kong's nginx template: variables it declares with `set` (writable), and those Kong's runloop fills in. */
const KONG_TEMPLATE: readonly Row[] = [
  ['ctx_ref', 'fallback', 'empty: a replay keeps `ngx.ctx` in the VM'],
  ['kong_proxy_mode', 'fallback', '`http`'],
  ['upstream_connection', 'emulated', '`upgrade` for an upgrade request, else `keep-alive`'],
  ['upstream_host', 'emulated', 'the `Host` header the service receives (writable)'],
  ['upstream_scheme', 'emulated', "the service's scheme (writable)"],
  ['upstream_te', 'emulated', '`trailers` when the client asked for them'],
  ['upstream_upgrade', 'emulated', "the request's `Upgrade`"],
  ['upstream_uri', 'emulated', 'path and query the service receives (writable)'],
  ['upstream_via', 'emulated', 'empty'],
  ['upstream_x_forwarded_for', 'emulated', 'the `X-Forwarded-For` Kong sends, the client appended'],
  ['upstream_x_forwarded_host', 'emulated', 'the host'],
  ['upstream_x_forwarded_path', 'emulated', 'the path, decoded'],
  ['upstream_x_forwarded_port', 'emulated', 'the port'],
  ['upstream_x_forwarded_prefix', 'emulated', 'the prefix the route stripped'],
  ['upstream_x_forwarded_proto', 'emulated', 'the scheme'],
]

/** Every variable the manifest knows, by the module that defines it. */
export const NGINX_VARIABLES: readonly NginxVariable[] = [
  ...group('http core', CORE),
  ...group('upstream', UPSTREAM),
  ...group('proxy', PROXY),
  ...group('ssl', SSL),
  ...OTHER_MODULES.flatMap(([from, rows]) => group(from, rows)),
  ...group("Kong's template", KONG_TEMPLATE),
]
