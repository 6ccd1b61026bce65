-- kong.db and kong.cache on the fixture's `db` section (filled in later).
local M = { db = {}, cache = {}, worker_events = {}, cluster_events = {} }
function M.init(rows) M.rows = rows or {} end
return M
