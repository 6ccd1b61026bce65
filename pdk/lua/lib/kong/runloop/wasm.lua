-- kong.runloop.wasm as a replay has it (written for broker): Kong's Wasm filters run in ngx_wasm_module,
-- nginx's C, which a replay does not have, so this is Kong with `wasm = off` (its default): not enabled,
-- no filters. Enabling it raises an error naming it.
local DISABLED = "wasm support is not enabled"

local M = {
  filters = {},
  filters_by_name = {},
  filter_names = {},
  filter_meta = {},
}

--- Whether Wasm filters run: never in a replay.
function M.enabled() return false end

--- nil and why, as Kong answers with Wasm off.
function M.status() return nil, DISABLED end

--- With Wasm off there is nothing to check.
function M.check_enabled_filters() return true end

-- what Kong's runloop calls with Wasm off: nothing to do
function M.init() end
function M.init_worker() end
function M.attach() end
function M.rebuild_state() end

function M.enable()
  error("kong.runloop.wasm.enable is not emulated by broker: Wasm filters need nginx's ngx_wasm_module", 2)
end

return M
