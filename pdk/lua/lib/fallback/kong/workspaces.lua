-- kong.workspaces (written for broker from Kong 3.x's behaviour): Kong's open-source edition has one
-- workspace, "default". Its id is kong.default_workspace (the spec runner sets it from its database when
-- Kong starts); a request's context may name another (ngx.ctx.workspace). A Kong checkout's module wins.
local M = {}

--- The id of the workspace `ctx` (or the current request's context) names, else the default one.
function M.get_workspace_id(ctx)
  local c = ctx or ngx.ctx
  return c and c.workspace or kong.default_workspace
end

--- Always "default": the open-source edition has no other workspace.
function M.get_workspace_name()
  return "default"
end

--- Makes `ws` (a workspace row, or nil) the current request's workspace.
function M.set_workspace(ws)
  ngx.ctx.workspace = ws and ws.id or nil
end

--- The current workspace's row, from kong.db when it holds workspaces.
function M.get_workspace()
  local dao = kong.db and kong.db.workspaces
  if not dao then return nil, "kong.db.workspaces is not available" end
  return dao:select({ id = M.get_workspace_id() })
end

--- Finds (or makes) the default workspace and makes it the current and default one.
function M.upsert_default()
  local dao = kong.db and kong.db.workspaces
  if not dao then return nil, "kong.db.workspaces is not available" end
  local ws, err = dao:select_by_name("default")
  if err then return nil, err end
  if not ws then
    ws, err = dao:insert({ name = "default" })
    if not ws then return nil, err end
  end
  ngx.ctx.workspace = ws.id
  kong.default_workspace = ws.id
  return ws
end

return M
