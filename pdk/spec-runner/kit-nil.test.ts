import { describe, it } from 'vitest'
import { allPass, runSpec } from './testing/specs.js'

// A kit call whose answer is nil gives Lua one nil, as Kong's PDK functions `return nil`: a plugin may hand it
// straight to a function that needs an argument (tonumber, select('#', …) counts it), which zero values break.
const NIL_READER = {
  'kong/plugins/nil-reader/handler.lua': `
local NilReader = { PRIORITY = 9, VERSION = "1.0.0" }
function NilReader:access(conf)
  local limit = tonumber(kong.request.get_header("x-absent"))
  local n = select("#", kong.request.get_query_arg("absent"))
  return kong.response.exit(200, { limit = limit or "none", values = n })
end
return NilReader`,
  'kong/plugins/nil-reader/schema.lua': `
return { name = "nil-reader", fields = { { config = { type = "record", fields = {} } } } }`,
}

const SPEC = `
local helpers = require "spec.helpers"
local cjson = require "cjson"
describe("Plugin: nil-reader", function()
  local proxy_client
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "nil-reader" })
    local route = bp.routes:insert { hosts = { "nil.test" } }
    bp.plugins:insert { name = "nil-reader", route = route }
    assert(helpers.start_kong({ plugins = "bundled,nil-reader" }))
    proxy_client = helpers.proxy_client()
  end)
  lazy_teardown(function() helpers.stop_kong() end)

  it("gets one nil from a kit call that answers nil", function()
    local res = proxy_client:get("/", { headers = { host = "nil.test" } })
    local body = cjson.decode(assert.res_status(200, res))
    assert.same({ limit = "none", values = 1 }, body)
  end)
end)
`

describe('kit calls that answer nil', () => {
  it('give Lua one nil, as Kong does', async () => {
    allPass(await runSpec(SPEC, NIL_READER), 1)
  })
})
