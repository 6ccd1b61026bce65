-- kong.tools.gzip (ffi-zlib in Kong; written for broker on Node's zlib): whole strings in and out,
-- nil, err for input that is not gzip.
local H = __host
return {
  deflate_gzip = function(str) return H("gzip", "deflate", str) end,
  inflate_gzip = function(gz) return H("gzip", "inflate", gz) end,
}
