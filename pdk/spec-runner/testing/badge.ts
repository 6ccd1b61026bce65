/**
 * A small plugin of our own for the spec runner's tests: `badge` reads a credential of its own DAO
 * (daos.lua, admin_api_name `badges`) from the `x-badge` header, authenticates its consumer and
 * logs what it did; `stamp` marks the upstream request with its config's value.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

export const BADGE_FILES: Record<string, string> = {
  'kong/plugins/badge/handler.lua': `
local Badge = { PRIORITY = 1250, VERSION = "1.0.0" }
function Badge:access(conf)
  local key = kong.request.get_header("x-badge")
  if not key then return kong.response.exit(401, { message = "no badge" }) end
  local cred = kong.db.badges:select_by_key(key)
  if not cred then
    kong.log.warn("unknown badge ", key)
    return kong.response.exit(401, { message = "bad badge" })
  end
  local consumer = kong.db.consumers:select(cred.consumer)
  kong.client.authenticate(consumer, cred)
  kong.service.request.set_header("x-badge-owner", consumer.username)
  ngx.log(ngx.NOTICE, "badge ok for ", consumer.username)
end
return Badge`,
  'kong/plugins/badge/schema.lua': `
return { name = "badge", fields = { { config = { type = "record", fields = {
  { realm = { type = "string", default = "office" } },
} } } } }`,
  'kong/plugins/badge/daos.lua': `
local typedefs = require "kong.db.schema.typedefs"
return { {
  name = "badges", primary_key = { "id" }, endpoint_key = "key", cache_key = { "key" }, ttl = true,
  admin_api_name = "badges", admin_api_nested_name = "badge",
  fields = {
    { id = typedefs.uuid },
    { created_at = typedefs.auto_timestamp_s },
    { consumer = { type = "foreign", reference = "consumers", required = true, on_delete = "cascade" } },
    { key = { type = "string", required = false, unique = true, auto = true } },
    { level = { type = "integer", default = 1, between = { 1, 5 } } },
  },
} }`,
  'kong/plugins/stamp/handler.lua': `
local Stamp = { PRIORITY = 800, VERSION = "1.0.0" }
function Stamp:access(conf)
  local had = kong.request.get_header("x-stamp")
  kong.service.request.set_header("x-stamp", (had and had .. "," or "") .. conf.value)
end
return Stamp`,
  'kong/plugins/stamp/schema.lua': `
return { name = "stamp", fields = { { config = { type = "record", fields = {
  { value = { type = "string", required = true } },
  { count = { type = "integer", between = { 1, 10 } } },
} } } } }`,
}

/** A plugin root in a temp folder with the badge and stamp plugins and the given files. */
export function badgeRoot(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'spec-badge-'))
  for (const [name, text] of Object.entries({ ...BADGE_FILES, ...files })) {
    mkdirSync(dirname(join(root, name)), { recursive: true })
    writeFileSync(join(root, name), text)
  }
  return root
}
