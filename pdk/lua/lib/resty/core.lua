-- resty.core: nothing to load; its APIs are part of broker's ngx.
return { version = "0.1.28" }
