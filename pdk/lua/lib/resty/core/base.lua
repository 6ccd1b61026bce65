-- resty.core.base: the few helpers plugin code reaches for (written for broker).
return {
  new_tab = function() return {} end,
  clear_tab = table.clear,
  get_request = function() return 1 end,
  get_string_buf = function() return "" end,
  FFI_OK = 0, FFI_NO_REQ_CTX = -100, FFI_BAD_CONTEXT = -101, FFI_ERROR = -1, FFI_DECLINED = -5,
  version = "0.1.28",
}
