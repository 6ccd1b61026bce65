-- kong.tools.queue, written for broker from the behaviour of Kong's queue (3.9): plugins hand it
-- entries (http-log, statsd, datadog, opentelemetry, zipkin) and a timer later passes them in
-- batches to a handler that sends them. Kong's own module needs ngx.semaphore and Kong's timer
-- library; timers never fire in a replay, so there an entry is kept and shown in the log, never
-- handed to the handler: a replay sends nothing. `broker pdk test` runs timers (Queue.sends, set
-- by its runner): there each batch goes to the handler, retried as Kong retries it.
local null = ngx.null
local Queue = { sends = false }

-- the queues of this replay by name, each { entries, bytes, conf, handler, handler_conf }
local queues = {}

-- a legacy parameter is warned about once per queue, as Kong warns at most once a minute
local warned = {}
local function warn_once(name, message)
  local key = name .. "/" .. message
  if warned[key] then return end
  warned[key] = true
  kong.log.warn(message)
end

local function set(v) return v ~= nil and v ~= null end

-- the plugin configuration's legacy parameters and where each moved
local LEGACY = {
  { field = "queue_size", old = 1, to = "max_batch_size", use = "queue.max_batch_size" },
  { field = "flush_timeout", old = 2, to = "max_coalescing_delay", use = "queue.max_coalescing_delay" },
  { field = "batch_span_count", old = 200, to = "max_batch_size", use = "queue.max_batch_size" },
  { field = "batch_flush_delay", old = 3, to = "max_coalescing_delay", use = "queue.max_coalescing_delay" },
}

--- The queue parameters of a plugin's config (its `queue` record), with a name (queue_name, else
--- the plugin's id), a log tag, and the legacy parameters moved to their new places.
function Queue.get_plugin_params(plugin_name, config, queue_name)
  local params = {}
  for k, v in pairs(set(config.queue) and config.queue or {}) do params[k] = v end
  local id = kong.plugin.get_id()
  params.log_tag = plugin_name .. " plugin " .. tostring(id)
  if set(config.plugin_instance_name) then
    params.log_tag = params.log_tag .. " (" .. config.plugin_instance_name .. ")"
  end
  params.name = params.name or queue_name or id
  if set(config.retry_count) and config.retry_count ~= 10 then
    warn_once(params.name, "the retry_count parameter no longer works, please update your configuration "
      .. "to use initial_retry_delay and max_retry_time instead")
  end
  for _, l in ipairs(LEGACY) do
    local v = config[l.field]
    if set(v) and v ~= l.old then
      params[l.to] = v
      warn_once(params.name, "the " .. l.field .. " parameter is deprecated, please update your configuration "
        .. "to use " .. l.use .. " instead")
    end
  end
  return params
end

local function check(cond, message)
  if not cond then error(message, 3) end
end

local NUMBERS = { "max_batch_size", "max_coalescing_delay", "max_entries", "max_retry_time",
  "initial_retry_delay", "max_retry_delay", "concurrency_limit" }

local function full(q)
  if q.entries_count >= q.conf.max_entries then return true end
  return q.conf.max_bytes ~= nil and q.bytes >= q.conf.max_bytes
end

local function fits(q, entry)
  if full(q) then return false end
  local max_bytes = q.conf.max_bytes
  if max_bytes == nil or type(entry) ~= "string" then return true end
  return #entry <= max_bytes and q.bytes + #entry <= max_bytes
end

local function drop_oldest(q)
  local e = table.remove(q.entries, 1)
  q.entries_count = q.entries_count - 1
  if q.conf.max_bytes and type(e) == "string" then q.bytes = q.bytes - #e end
end

local flush

-- a timer for the queue's next batch: at once when a batch is full, else after max_coalescing_delay; one of
-- each at a time (entries queued past a full batch wait for the next, as Kong's consumer takes one batch per turn)
local function schedule(name, q)
  local now = q.entries_count >= q.conf.max_batch_size
  local flag = now and "due" or "scheduled"
  if q.busy or q[flag] then return end
  q[flag] = true
  ngx.timer.at(now and 0 or q.conf.max_coalescing_delay, function() q[flag] = false flush(name) end)
end

-- hands one batch to the handler; a failure is retried after initial_retry_delay, doubling up to
-- max_retry_delay, until max_retry_time has passed since the first try: then the batch is lost
-- the queue's own lines name it and its plugin (log_tag), as Kong's do; trace lines show only while
-- Kong's tests run (kong.log.trace)
local function tag_of(conf, name) return "[" .. (conf.log_tag or "") .. "] queue " .. name .. ": " end

-- the batch handed over: more entries are scheduled, or the queue is done (an entry sent without a queue,
-- concurrency_limit -1, has no queue to be done with)
local function settled(name, q)
  q.busy = false
  if q.unqueued then return end
  if q.entries_count > 0 then return schedule(name, q) end
  kong.log.trace(tag_of(q.conf, name), "done processing queue")
end

local function run_batch(name, q, batch, started, attempt)
  local tag = tag_of(q.conf, name)
  kong.log.trace(tag, "passing ", #batch, " entries to handler")
  local fine, ok, err = pcall(q.handler, q.handler_conf, batch)
  if fine and ok == true then
    kong.log.trace(tag, "handler processed ", #batch, " entries successfully")
    return settled(name, q)
  end
  if not fine then err = ok end
  kong.log.warn(tag, "handler could not process entries: ", tostring(err or "no error details returned by handler"))
  if not err then kong.log.err(tag, "handler returned falsy value but no error information") end
  local delay = math.min(q.conf.initial_retry_delay * 2 ^ (attempt - 1), q.conf.max_retry_delay)
  if ngx.now() - started + delay > q.conf.max_retry_time then
    kong.log.err(tag, "could not send entries due to max_retry_time exceeded. ", #batch, " queue entries were lost")
    return settled(name, q)
  end
  ngx.timer.at(delay, function() run_batch(name, q, batch, started, attempt + 1) end)
end

flush = function(name)
  local q = queues[name]
  if not q or q.busy or q.entries_count == 0 then return end
  local batch = {}
  for i = 1, math.min(q.entries_count, q.conf.max_batch_size) do batch[i] = q.entries[1] drop_oldest(q) end
  q.busy = true
  run_batch(name, q, batch, ngx.now(), 1)
end

--- Queues `value` for `handler(handler_conf, entries)`: true, or nil and an error (a nil entry, a
--- string longer than max_bytes). Bad arguments raise, as Kong's asserts do.
function Queue.enqueue(queue_conf, handler, handler_conf, value)
  check(type(queue_conf) == "table", "arg #1 (queue_conf) must be a table")
  check(type(handler) == "function", "arg #2 (handler) must be a function")
  check(handler_conf == nil or type(handler_conf) == "table", "arg #3 (handler_conf) must be a table or nil")
  check(type(queue_conf.name) == "string", "arg #1 (queue_conf) must include a name")
  for _, k in ipairs(NUMBERS) do
    check(type(queue_conf[k]) == "number", "arg #1 (queue_conf) " .. k .. " must be a number")
  end
  check(queue_conf.max_bytes == nil or type(queue_conf.max_bytes) == "number",
    "arg #1 (queue_conf) max_bytes must be a number or nil")

  local name = queue_conf.name
  local q = queues[name]
  if not q then
    q = { entries = {}, entries_count = 0, bytes = 0 }
    queues[name] = q
    kong.log.trace(tag_of(queue_conf, name), "queue created")
  else
    kong.log.trace(tag_of(queue_conf, name), "queue exists")
  end
  -- the latest configuration seen for a queue wins, as in Kong
  q.conf, q.handler, q.handler_conf = queue_conf, handler, handler_conf

  if value == nil then return nil, "entry must be a non-nil Lua value" end
  local tag = tag_of(queue_conf, name)
  local max_bytes = queue_conf.max_bytes
  if max_bytes and type(value) == "string" and #value > max_bytes then
    local err = string.format("string to be queued is longer (%d bytes) than the queue's max_bytes (%d bytes)",
      #value, max_bytes)
    kong.log.err(tag .. err)
    return nil, err
  end
  if queue_conf.concurrency_limit ~= -1 then
    if q.entries_count >= queue_conf.max_entries then
      kong.log.err(tag .. "queue full, dropping old entries until processing is successful again")
      drop_oldest(q)
    end
    local dropped = 0
    while max_bytes and type(value) == "string" and q.bytes + #value > max_bytes do
      drop_oldest(q)
      dropped = dropped + 1
    end
    if dropped > 0 then kong.log.err(tag .. "byte capacity exceeded, " .. dropped .. " queue entries were dropped") end
    q.entries_count = q.entries_count + 1
    q.entries[q.entries_count] = value
    if max_bytes and type(value) == "string" then q.bytes = q.bytes + #value end
  end
  if Queue.sends then
    kong.log.notice("kong.tools.queue: entry queued for ", name)
    if queue_conf.concurrency_limit == -1 then
      -- no queue: each entry in its own timer, as Kong sends it
      local one = { conf = queue_conf, handler = handler, handler_conf = handler_conf, entries_count = 0, unqueued = true }
      ngx.timer.at(0, function() one.busy = true run_batch(name, one, { value }, ngx.now(), 1) end)
    else
      schedule(name, q)
    end
    return true
  end
  kong.log.notice("kong.tools.queue: entry queued for ", name, " (a replay sends nothing)")
  -- the entry in the trace, as the handler would have received it
  -- (a bare VM, as the module's unit test loads it, has no host)
  if __host then __host("trace", "kong.tools.queue.enqueue", name, value) end
  return true
end

--- Whether the named queue holds as many entries (or bytes) as it may; false for a queue not made yet.
function Queue.is_full(queue_conf)
  local q = queues[queue_conf.name]
  return q ~= nil and full(q)
end

--- Whether `entry` would fit on the named queue without dropping others; true for a queue not made yet.
function Queue.can_enqueue(queue_conf, entry)
  local q = queues[queue_conf.name]
  if not q then return true end
  return fits(q, entry)
end

--- Whether a queue of that name exists.
function Queue.exists(name)
  return queues[name] ~= nil
end

--- The entries kept on the named queue (a replay's view of what would be sent), oldest first.
function Queue._entries(name)
  local q = queues[name]
  return q and q.entries or {}
end

return Queue
