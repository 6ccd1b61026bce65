import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LIB_DIR } from './modules.js'
import { createVm } from './engine.js'

// The emulated modules Kong's rate-limiting needs (luatz under kong.tools.timestamp, resty.counter and
// kong.tools.rand under kong.reports) and the shared dicts its local policy counts in, each loaded from its
// file through package.preload in a bare VM with a stub ngx whose clock the test moves.
const vm = await createVm({ heapLimit: 32 * 1024 * 1024 })
afterAll(() => vm.close())
const lua = (code: string) => vm.run(code, '=test')
const preload = (name: string, file: string) => {
  const src = readFileSync(join(LIB_DIR, file), 'utf8')
  lua(`package.preload[${JSON.stringify(name)}] = assert(load(${JSON.stringify(src)}, "@${file}"))`)
}
lua(`now = 1764144000.25
     warnings = {}
     ngx = { now = function() return now end, WARN = 5, log = function(_, ...) warnings[#warnings + 1] = table.concat({ ... }) end,
             encode_base64 = function(s) return string.rep("A/+b", #s // 3) end }
     package.preload["resty.random"] = function()
       return { bytes = function(n) return string.rep("\\255", n) end }
     end`)
preload('luatz', 'luatz/init.lua')
preload('luatz.timetable', 'luatz/timetable.lua')
preload('resty.counter', 'resty/counter.lua')
preload('kong.tools.rand', 'kong/tools/rand.lua')
preload('broker.shdict', 'broker/shdict.lua')
lua('ngx.shared = require "broker.shdict"')

// UTC fields of a timestamp in seconds, as JavaScript's Date gives them
const utc = (s: number) => {
  const d = new Date(s * 1000)
  return [
    d.getUTCFullYear(),
    d.getUTCMonth() + 1,
    d.getUTCDate(),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
  ]
}

describe('luatz (UTC)', () => {
  it('breaks a timestamp into the UTC fields JavaScript finds, and back, across leap days and centuries', () => {
    const stamps = [0, -1, 951782400, 951868799, 1709164800, 4107542400, 4107628800, 1764144017, -2208988800]
    for (const s of stamps) {
      const [t, back, y, m, d, h, mi, sec] = lua(`local t = require("luatz").timetable.new_from_timestamp(${s})
        return tostring(t), t:timestamp(), t.year, t.month, t.day, t.hour, t.min, t.sec`)
      expect([y, m, d, h, mi, sec], `${s}`).toEqual(utc(s))
      expect(back).toBe(s)
      expect(t).toBe(new Date(s * 1000).toISOString().slice(0, 19))
    }
  })

  it('keeps the fraction of a second, and luatz.time reads ngx.now', () => {
    expect(
      lua(`local luatz = require "luatz"
           local t = luatz.timetable.new_from_timestamp(luatz.time())
           return luatz.time(), t.sec, t:timestamp(), tostring(t), tostring(luatz.now()), luatz.gmtime(0):timestamp()`),
    ).toEqual([1764144000.25, 0.25, 1764144000.25, '2025-11-26T08:00:00.25', '2025-11-26T08:00:00.25', 0])
  })

  it('reads fields out of range as arithmetic, as Kong rounds a time down to each period', () => {
    expect(
      lua(`local tt = require("luatz").timetable
           local t = tt.new(2024, 2, 29, 23, 59, 59.5)
           t.sec = math.floor(t.sec)
           local second = t:timestamp()
           t.sec = 0; local minute = t:timestamp()
           t.min = 0; t.hour = 0; local day = t:timestamp()
           t.day = 1; local month = t:timestamp()
           t.month = 1; local year = t:timestamp()
           local over = tt.new(2023, 14, 31, 10, 100, 0):normalise()
           local half = tt.new(2023, 6.5, 1, 0, 0, 0):normalise()
           return second, minute, day, month, year, tt.new(20000, 1, 1, 0, 0, 0):timestamp(),
             tostring(over), over.yday, over.wday, tostring(half), tt.new(2024, 1, 0, 0, 0, -1):timestamp()`),
    ).toEqual([
      Date.UTC(2024, 1, 29, 23, 59, 59) / 1000,
      Date.UTC(2024, 1, 29, 23, 59) / 1000,
      Date.UTC(2024, 1, 29) / 1000,
      Date.UTC(2024, 1, 1) / 1000,
      Date.UTC(2024, 0, 1) / 1000,
      Date.UTC(20000, 0, 1) / 1000,
      '2024-03-02T11:40:00',
      62,
      7, // a Saturday; 1 is Sunday, as os.date's wday
      '2023-06-16T00:00:00',
      Date.UTC(2023, 11, 30, 23, 59, 59) / 1000,
    ])
  })

  it('compares timetables by the time they name', () => {
    expect(
      lua(`local tt = require("luatz").timetable
           return tt.new(2024, 1, 1, 24, 0, 0) == tt.new(2024, 1, 2, 0, 0, 0), tt.new(2024, 1, 1, 0, 0, 0) < tt.new(2023, 13, 1, 0, 0, 1)`),
    ).toEqual([true, true])
  })

  it('refuses the time-zone functions by name (no zoneinfo database in a replay)', () => {
    expect(
      lua(
        `local luatz = require "luatz" return pcall(function() local tz = luatz.get_tz("Europe/Paris") return tz end)`,
      ),
    ).toEqual([
      false,
      'test:1: luatz.get_tz is not emulated by broker (time zones need the zoneinfo database); luatz.time, now, gmtime and timetable are',
    ])
  })
})

describe('ngx.shared dicts as OpenResty has them', () => {
  it('incr starts a missing key at init with init_ttl, keeps the ttl on later increments, and forgets it once expired', () => {
    expect(
      lua(`local d = ngx.shared.counters_a
           local missing, err = d:incr("k", 1)
           local a = d:incr("k", 1, 0, 60)
           now = now + 30
           local b = d:incr("k", 2, 0, 60)
           local ttl = d:ttl("k")
           now = now + 31
           local gone = d:get("k")
           local c = d:incr("k", 1, 10, 5)
           d:set("s", "text")
           local nan, nan_err = d:incr("s", 1)
           return missing, err, a, b, ttl, gone, c, d:ttl("k"), nan, nan_err`),
    ).toEqual([undefined, 'not found', 1, 3, 30, undefined, 11, 5, undefined, 'not a number'])
  })
})

describe('resty.counter', () => {
  it('counts in the worker and moves the counts to the shared dict on sync', () => {
    expect(
      lua(`local c = assert(require("resty.counter").new("counters_b", 600))
           c:incr("hits") c:incr("hits", 4)
           local before = c:get("hits")
           local synced = c:sync()
           local after = c:get("hits")
           c:incr("hits") c:sync()
           local six = c:get("hits")
           local reset = c:reset("hits", 5)
           local none, err = require("resty.counter").new("counters_c", "often")
           return before, synced, after, six, reset, c:get("hits"), none, err`),
    ).toEqual([undefined, true, 5, 6, 1, 1, undefined, 'expect sync_interval to be a number'])
  })

  it('logs a key it cannot add to and reports the sync as failed', () => {
    expect(
      lua(`ngx.shared.counters_d:set("k", "text")
           local c = require("resty.counter").new("counters_d")
           c:incr("k")
           return c:sync(), warnings[#warnings]`),
    ).toEqual([false, 'error increasing counter in shdict key: k, err: not a number'])
  })
})

describe('kong.tools.rand', () => {
  it('gives n random bytes and a 32-character string without / or +', () => {
    expect(
      lua(`local rand = require "kong.tools.rand"
           local s = rand.random_string()
           return #rand.get_rand_bytes(24, true), #s, s:find("[^%w]") == nil, rand.get_rand_bytes(3):byte(1, -1)`),
    ).toEqual([24, 32, true, 255, 255, 255])
  })
})
