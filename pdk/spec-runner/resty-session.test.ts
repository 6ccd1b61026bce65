import { describe, it } from 'vitest'
import { allPass, runSpec } from './testing/specs.js'

// resty.session (lua-resty-session 4, which Kong's session plugin uses) under `broker pdk test`: a `login` plugin of
// ours keeps a session in a cookie, or in a storage table of its own, and a spec in Kong's style drives it through
// the proxy on the spec's clock: the cookie's attributes, a changed cookie refused, the idling, rolling and absolute
// timeouts, the remember cookie, logout. The codec's bytes are checked in pdk/lua/lib-session.test.ts.
const LOGIN_FILES: Record<string, string> = {
  'kong/plugins/login/handler.lua': `
local session = require "resty.session"
local H = { PRIORITY = 1000, VERSION = "1.0.0" }

-- a storage table as Kong's session plugin gives one (kong.plugins.session.storage.kong): set, get, delete
local kept = {}
local store = {
  set = function(_, name, key, value) kept[name .. ":" .. key] = value return true end,
  get = function(_, name, key) return kept[name .. ":" .. key] end,
  delete = function(_, name, key) kept[name .. ":" .. key] = nil return true end,
}

function H:access(conf)
  local opts = {
    secret = "our secret", cookie_secure = false, idling_timeout = conf.idling, rolling_timeout = conf.rolling,
    absolute_timeout = conf.absolute, remember = conf.remember, remember_rolling_timeout = 600,
    storage = conf.stored and store or nil, response_headers = { "id", "subject" },
  }
  local action = kong.request.get_query_arg("do")
  if action == "destroy" then
    local ok, err, exists, destroyed = session.destroy(opts)
    return kong.response.exit(200, { ok = ok or false, err = err, exists = exists, destroyed = destroyed })
  end
  local s, err, exists = session.open(opts)
  if action == "login" then
    s:set_subject("ann")
    s:set("user", "ann")
    assert(s:save())
    return kong.response.exit(200, { login = true })
  end
  if not exists then return kong.response.exit(401, { message = err }) end
  if action == "logout" then
    assert(s:logout())
    return kong.response.exit(200, { logout = true })
  end
  assert(s:refresh())
  s:set_headers()
  if action == "clear" then
    assert(s:clear_request_cookie())
    return kong.response.exit(200, { cookie = ngx.req.get_headers()["Cookie"] })
  end
  return kong.response.exit(200, { user = s:get("user") })
end
return H`,
  'kong/plugins/login/schema.lua': `
return { name = "login", fields = { { config = { type = "record", fields = {
  { idling = { type = "number", default = 100 } },
  { rolling = { type = "number", default = 200 } },
  { absolute = { type = "number", default = 300 } },
  { remember = { type = "boolean", default = false } },
  { stored = { type = "boolean", default = false } },
} } } } }`,
}

const PRELUDE = `
local helpers = require "spec.helpers"
local cjson = require "cjson"
local proxy
local function setup()
  local bp = helpers.get_db_utils("postgres", nil, { "login" })
  bp.plugins:insert({ name = "login", route = { id = bp.routes:insert({ hosts = { "cookie.test" } }).id } })
  bp.plugins:insert({ name = "login", route = { id = bp.routes:insert({ hosts = { "remember.test" } }).id },
    config = { remember = true } })
  bp.plugins:insert({ name = "login", route = { id = bp.routes:insert({ hosts = { "stored.test" } }).id },
    config = { stored = true } })
  assert(helpers.start_kong({ plugins = "bundled,login" }))
  proxy = helpers.proxy_client()
end
-- the Set-Cookie values of a response, by cookie name
local function set_cookies(res)
  local h = res.headers["Set-Cookie"]
  local out = {}
  for _, c in ipairs(type(h) == "table" and h or { h }) do out[c:match("^([^=]+)=")] = c end
  return out
end
local function login(host)
  local res = assert(proxy:get("/", { query = { ["do"] = "login" }, headers = { host = host } }))
  assert.res_status(200, res)
  return set_cookies(res)
end
local function pair(set_cookie) return set_cookie:match("^([^;]+)") end
local function visit(host, cookie, query)
  return assert(proxy:get("/", { query = query, headers = { host = host, cookie = cookie } }))
end
local function refused(res) return cjson.decode(assert.res_status(401, res)).message end
`

describe('resty.session in a plugin under the spec runner', () => {
  it('a saved session opens from its cookie; a cookie changed by one character is refused; clear_request_cookie', async () => {
    const results = await runSpec(
      `${PRELUDE}
describe("resty.session", function()
  lazy_setup(setup)
  it("sets a session cookie with the configured attributes, which opens the session", function()
    local sc = login("cookie.test").session
    assert.matches("^session=[%w_-]+; Path=/; SameSite=Lax; HttpOnly$", sc)
    local res = visit("cookie.test", pair(sc))
    assert.same({ user = "ann" }, cjson.decode(assert.res_status(200, res)))
    assert.equal(43, #res.headers["Session-Id"])
    assert.equal("ann", res.headers["Session-Subject"])
  end)
  it("refuses a cookie with its header or its data changed", function()
    local c = pair(login("cookie.test").session)
    local function flip(s, i) return s:sub(1, i - 1) .. (s:sub(i, i) == "A" and "B" or "A") .. s:sub(i + 1) end
    assert.equal("invalid session message authentication code", refused(visit("cookie.test", flip(c, 40))))
    assert.equal("unable to decrypt session data", refused(visit("cookie.test", flip(c, #c - 2))))
    assert.equal("missing session cookie", refused(visit("cookie.test", nil)))
  end)
  it("clear_request_cookie keeps the request's other cookies from the service", function()
    local c = pair(login("cookie.test").session)
    local res = visit("cookie.test", "a=1; " .. c .. "; b=2", { ["do"] = "clear" })
    assert.same({ cookie = "a=1; b=2" }, cjson.decode(assert.res_status(200, res)))
  end)
  it("session.destroy: ok, err, exists, destroyed", function()
    local c = pair(login("cookie.test").session)
    local res = visit("cookie.test", c, { ["do"] = "destroy" })
    assert.same({ ok = true, exists = true, destroyed = true }, cjson.decode(assert.res_status(200, res)))
    assert.matches("^session=; ", set_cookies(res).session)
    res = visit("cookie.test", nil, { ["do"] = "destroy" })
    assert.same({ ok = false, err = "missing session cookie", exists = false, destroyed = false },
      cjson.decode(assert.res_status(200, res)))
  end)
  it("logout expires the cookie", function()
    local c = pair(login("cookie.test").session)
    local res = visit("cookie.test", c, { ["do"] = "logout" })
    assert.res_status(200, res)
    assert.matches("^session=; Path=/; SameSite=Lax; HttpOnly; Expires=Thu, 01 Jan 1970 00:00:01 GMT; Max%-Age=0$",
      set_cookies(res).session)
  end)
end)`,
      LOGIN_FILES,
    )
    allPass(results, 5)
  })

  it('the idling, rolling and absolute timeouts, on the spec clock', async () => {
    const results = await runSpec(
      `${PRELUDE}
describe("resty.session timeouts", function()
  lazy_setup(setup)
  it("a session idle for longer than idling_timeout is refused", function()
    local c = pair(login("cookie.test").session)
    ngx.sleep(101)
    assert.equal("session idling timeout exceeded", refused(visit("cookie.test", c)))
  end)
  it("refresh touches (same id) after touch_threshold, saves anew (new id) at 3/4 of rolling_timeout, until absolute_timeout", function()
    local c = pair(login("cookie.test").session)
    local res = visit("cookie.test", c)
    local id = res.headers["Session-Id"]
    assert.is_nil(res.headers["Set-Cookie"])
    ngx.sleep(70)
    res = visit("cookie.test", c)
    assert.res_status(200, res)
    c = pair(set_cookies(res).session)
    assert.equal(id, res.headers["Session-Id"])
    ngx.sleep(70)
    res = visit("cookie.test", c)
    c = pair(set_cookies(res).session)
    assert.equal(id, res.headers["Session-Id"])
    ngx.sleep(20)
    res = visit("cookie.test", c)
    c = pair(set_cookies(res).session)
    assert.not_equal(id, res.headers["Session-Id"])
    ngx.sleep(99)
    res = visit("cookie.test", c)
    c = pair(set_cookies(res).session)
    ngx.sleep(50)
    assert.equal("session absolute timeout exceeded", refused(visit("cookie.test", c)))
  end)
end)`,
      LOGIN_FILES,
    )
    allPass(results, 2)
  })

  it('the remember cookie persists and opens the session alone; a storage table keeps the data', async () => {
    const results = await runSpec(
      `${PRELUDE}
describe("resty.session remember and storage", function()
  lazy_setup(setup)
  it("remember: a persistent remember cookie beside the session cookie, which alone opens the session", function()
    local cookies = login("remember.test")
    assert.matches("^session=[%w_-]+; Path=/; SameSite=Lax; HttpOnly$", cookies.session)
    assert.matches("^remember=[%w_-]+; Path=/; SameSite=Lax; HttpOnly; Expires=[^;]+ GMT; Max%-Age=600$", cookies.remember)
    ngx.sleep(150)
    assert.equal("session idling timeout exceeded", refused(visit("remember.test", pair(cookies.session))))
    local res = visit("remember.test", pair(cookies.remember))
    assert.same({ user = "ann" }, cjson.decode(assert.res_status(200, res)))
    assert.matches("^session=[%w_-]+", set_cookies(res).session)
    ngx.sleep(601)
    assert.equal("session rolling timeout exceeded", refused(visit("remember.test", pair(cookies.remember))))
  end)
  it("stored: the cookie is the header alone, the data is in the storage, and logout deletes it", function()
    local c = pair(login("stored.test").session)
    assert.equal(#"session=" + 110, #c)
    assert.same({ user = "ann" }, cjson.decode(assert.res_status(200, visit("stored.test", c))))
    assert.res_status(200, visit("stored.test", c, { ["do"] = "logout" }))
    assert.equal("session data not found", refused(visit("stored.test", c)))
  end)
end)`,
      LOGIN_FILES,
    )
    allPass(results, 2)
  })
})
