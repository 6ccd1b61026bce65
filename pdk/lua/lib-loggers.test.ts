import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LIB_DIR } from './modules.js'
import { createVm } from './engine.js'

// What Kong's logging plugins (http-log, statsd, datadog …) need: typedefs.queue through broker's
// schema processing and kong.tools.queue, each loaded from its file through
// package.preload in a bare VM with a stub ngx and a stub kong whose log lines the test reads.
const vm = await createVm({ heapLimit: 32 * 1024 * 1024 })
afterAll(() => vm.close())
vm.run('function run(code, ...) return assert(load(code, "=test"))(...) end', '=run')
const lua = (code: string, ...args: unknown[]) => vm.call('run', code, ...args)
const preload = (name: string, file: string) => {
  const src = readFileSync(join(LIB_DIR, file), 'utf8')
  lua(`package.preload[${JSON.stringify(name)}] = assert(load(${JSON.stringify(src)}, "@${file}"))`)
}
lua(`ngx = { null = setmetatable({}, { __tostring = function() return "null" end }) }
     __broker_array_mt = {}
     lines = {}
     local function logger(level) return function(...) lines[#lines + 1] = level .. " " .. table.concat({ ... }) end end
     kong = { log = { notice = logger("notice"), warn = logger("warn"), err = logger("err"), trace = function() end },
              plugin = { get_id = function() return "5a1e0000-0000-4000-8000-000000000001" end } }`)
preload('socket.url', 'socket/url.lua')
preload('kong.db.schema', 'kong/db/schema/init.lua')
preload('kong.db.schema.typedefs', 'kong/db/schema/typedefs.lua')
preload('broker.schema', 'broker/schema.lua')
preload('kong.tools.queue', 'kong/tools/queue.lua')

// a plugin schema with a queue, as http-log's (the queue typedef, maybe called with a default)
const process = (conf: unknown, field = 'typedefs.queue') =>
  lua(
    `local typedefs = require "kong.db.schema.typedefs"
     local schema = { fields = { { config = { type = "record", fields = {
       { endpoint = typedefs.url { required = true } }, { queue = ${field} } } } } } }
     return require("broker.schema").process(schema, ...)`,
    conf,
  )

const DEFAULTS = {
  max_batch_size: 1,
  max_coalescing_delay: 1,
  max_entries: 10000,
  max_retry_time: 60,
  initial_retry_delay: 0.01,
  max_retry_delay: 60,
  concurrency_limit: 1,
}

describe('typedefs.queue', () => {
  it("fills Kong's queue defaults, and keeps the values given", () => {
    expect(process({ endpoint: 'http://logs.test/' })).toEqual([{ endpoint: 'http://logs.test/', queue: DEFAULTS }])
    expect(process({ endpoint: 'http://logs.test/', queue: { max_batch_size: 50, max_bytes: 4096 } })[0]).toEqual({
      endpoint: 'http://logs.test/',
      queue: { ...DEFAULTS, max_batch_size: 50, max_bytes: 4096 },
    })
  })

  it('is callable with a default record, whose gaps the field defaults fill (opentelemetry batches 200)', () => {
    expect(
      process({ endpoint: 'http://logs.test/' }, 'typedefs.queue { default = { max_batch_size = 200 } }')[0],
    ).toEqual({ endpoint: 'http://logs.test/', queue: { ...DEFAULTS, max_batch_size: 200 } })
  })

  it("refuses values out of Kong's bounds, naming the field", () => {
    const refused = (queue: Record<string, unknown>) => process({ endpoint: 'http://logs.test/', queue })[1]
    expect(refused({ max_batch_size: 0 })).toEqual({ 'queue.max_batch_size': 'value should be between 1 and 1000000' })
    expect(refused({ max_coalescing_delay: 3601 })).toEqual({
      'queue.max_coalescing_delay': 'value should be between 0 and 3600',
    })
    expect(refused({ max_entries: 1.5 })).toEqual({ 'queue.max_entries': 'expected an integer' })
    expect(refused({ initial_retry_delay: 0 })).toEqual({
      'queue.initial_retry_delay': 'value should be between 0.001 and 1000000',
    })
    expect(refused({ concurrency_limit: 4 })).toEqual({ 'queue.concurrency_limit': 'expected one of: -1, 1' })
    expect(refused({ max_retry_time: 'soon' })).toEqual({ 'queue.max_retry_time': 'expected a number' })
    expect(refused({ batch: 2 })).toEqual({ 'queue.batch': 'unknown field' })
  })

  it('typedefs.url wants a scheme and a host, and no empty string', () => {
    const refused = (endpoint: string) => (process({ endpoint })[1] as Record<string, string>).endpoint
    expect(refused('logs.test/ingest')).toBe('missing host in url')
    expect(refused('//logs.test/ingest')).toBe('missing scheme in url')
    expect(refused('')).toBe('length must be at least 1')
  })
})

describe('kong.tools.queue', () => {
  const params = `local Queue = require "kong.tools.queue"
    local conf = { queue = { max_batch_size = 1, max_coalescing_delay = 1, max_entries = 2, max_retry_time = 60,
      initial_retry_delay = 0.01, max_retry_delay = 60, concurrency_limit = 1 } }`

  it('names a queue and tags it from the plugin, moving the legacy parameters with a warning', () => {
    lua('lines = {}')
    const [name, tag, batch, delay, left] = lua(`${params}
      conf.queue_size = 25; conf.flush_timeout = 2; conf.plugin_instance_name = "audit"
      local q = Queue.get_plugin_params("http-log", conf, "http://logs.test:POST")
      local unnamed = Queue.get_plugin_params("statsd", { queue = {} })
      return q.name, q.log_tag, q.max_batch_size, q.max_coalescing_delay, unnamed.name`)
    expect([name, tag, batch, delay, left]).toEqual([
      'http://logs.test:POST',
      'http-log plugin 5a1e0000-0000-4000-8000-000000000001 (audit)',
      25,
      1,
      '5a1e0000-0000-4000-8000-000000000001',
    ])
    expect(lua('return lines')[0]).toEqual([
      'warn the queue_size parameter is deprecated, please update your configuration to use queue.max_batch_size instead',
    ])
  })

  it('keeps each entry without calling the handler, and logs it as queued', () => {
    lua('lines = {}')
    const [ok, called, entries, full] = lua(`${params}
      local q = Queue.get_plugin_params("http-log", conf, "keep")
      local called = false
      local ok = Queue.enqueue(q, function() called = true return true end, conf, '{"a":1}')
      return ok, called, Queue._entries("keep"), Queue.is_full(q)`)
    expect([ok, called, entries, full]).toEqual([true, false, ['{"a":1}'], false])
    expect(lua('return lines')[0]).toEqual(['notice kong.tools.queue: entry queued for keep (a replay sends nothing)'])
  })

  it('drops the oldest entry past max_entries, with an error line, and answers is_full / can_enqueue', () => {
    lua('lines = {}')
    const [before, fits, full, entries] = lua(`${params}
      local q = Queue.get_plugin_params("http-log", conf, "small")
      local h = function() return true end
      Queue.enqueue(q, h, nil, "one")
      local before = Queue.can_enqueue(q, "x")
      Queue.enqueue(q, h, nil, "two")
      Queue.enqueue(q, h, nil, "three")
      return before, Queue.can_enqueue(q, "x"), Queue.is_full(q), Queue._entries("small")`)
    expect([before, fits, full, entries]).toEqual([true, false, true, ['two', 'three']])
    expect(lua('return lines')[0]).toContainEqual(
      expect.stringContaining(
        'err [http-log plugin 5a1e0000-0000-4000-8000-000000000001] queue small: queue full, dropping old entries',
      ),
    )
    expect(lua('return require("kong.tools.queue").can_enqueue({ name = "never made" }, "x")')).toEqual([true])
  })

  it('answers nil, err for a nil entry or a string past max_bytes, and raises for bad arguments as Kong asserts', () => {
    expect(
      lua(`${params}
        local q = Queue.get_plugin_params("http-log", conf, "bytes")
        q.max_bytes = 4
        local h = function() return true end
        local a, ea = Queue.enqueue(q, h, nil, nil)
        local b, eb = Queue.enqueue(q, h, nil, "too long")
        return a, ea, b, eb`),
    ).toEqual([
      undefined,
      'entry must be a non-nil Lua value',
      undefined,
      "string to be queued is longer (8 bytes) than the queue's max_bytes (4 bytes)",
    ])
    const raised = (call: string) => lua(`${params} return select(2, pcall(function() ${call} end))`)[0]
    expect(raised('Queue.enqueue(conf.queue, function() end, nil, 1)')).toMatch(
      /arg #1 \(queue_conf\) must include a name$/,
    )
    expect(raised('Queue.enqueue({ name = "n" }, "h", nil, 1)')).toMatch(/arg #2 \(handler\) must be a function$/)
    expect(raised('Queue.enqueue({ name = "n" }, function() end, nil, 1)')).toMatch(
      /arg #1 \(queue_conf\) max_batch_size must be a number$/,
    )
  })
})
