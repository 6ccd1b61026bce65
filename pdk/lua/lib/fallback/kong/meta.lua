-- kong.meta for a plugin or spec outside Kong's checkout (a checkout's own kong/meta.lua wins): the version of
-- Kong the emulator is (the kong global's `version`), in the fields Kong's module has.
local text = kong and kong.version
if type(text) ~= "string" then
  error("kong.meta: the kong global has no version yet (broker sets it before a plugin or spec loads)", 2)
end
local major, minor, patch = text:match("^(%d+)%.(%d+)%.(%d+)")
local version = setmetatable({
  major = tonumber(major),
  minor = tonumber(minor),
  patch = tonumber(patch),
}, {
  __tostring = function(t) return string.format("%d.%d.%d", t.major, t.minor, t.patch) end,
})

return {
  _NAME = "kong",
  _VERSION = tostring(version),
  _VERSION_TABLE = version,
  _SERVER_TOKENS = "kong/" .. tostring(version),
  version = tostring(version),
  -- the versions of what Kong runs on that broker emulates (ngx_lua's and nginx's, as ngx.config names them)
  _DEPENDENCIES = {
    nginx = { ngx.config.nginx_version },
  },
}
