-- resty.lrucache.pureffi: the same cache as resty.lrucache.
return require "resty.lrucache"
