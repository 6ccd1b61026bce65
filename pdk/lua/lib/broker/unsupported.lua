-- A function of a module that loads but is not emulated (resty.redis, ngx.socket.*): calling it
-- tells the host, which fails the fixture naming the module, and raises at the caller's line so
-- the plugin stops there as well.
local tell = __unsupported
return function(module, what)
  error(tell(module, what), 3)
end
