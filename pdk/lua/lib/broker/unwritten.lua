-- A function of a Kong module broker has not written (a fallback used without a Kong checkout on
-- lua_path): calling it raises an error naming it and the way out.
return function(name)
  return function()
    error(name .. " is not written by broker's fallback: put a checkout of Kong's source on lua_path " ..
      "(the fixture's lua_path or --lua-path), whose own file then loads", 2)
  end
end
