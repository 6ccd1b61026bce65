import { afterAll, describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'
import { LuaRuntime } from './runtime.js'

// What Kong's AI plugins load besides Kong's own code (kong/llm/drivers/shared.lua requires lua-resty-aws and
// lua-resty-gcp at its top), and the schema shape their config uses (a required record left out, filled with its
// defaults), in a whole runtime without a Kong checkout.
const rt = await LuaRuntime.bare(kitFor({}, 'access'))
afterAll(() => rt.close())
const lua = (code: string, ...args: unknown[]) => {
  rt.vm.run(`function __t(...) ${code} end`, '=test')
  return rt.vm.call('__t', ...args)
}

describe('lua-resty-aws and lua-resty-gcp', () => {
  it('load; an instance keeps its config and static credentials answer get() as lua-resty-aws does', () => {
    expect(
      lua(`local AWS = require "resty.aws"
           local aws = AWS({ region = "eu-west-1" })
           local creds = aws:Credentials { accessKeyId = "AKID", secretAccessKey = "SECRET" }
           local ok, key, secret = creds:get()
           return aws.config.region, ok, key, secret, type(require("resty.aws.config").global),
             type(require "resty.aws.request.sign"), type(require("resty.gcp.request.credentials.accesstoken").new)`),
    ).toEqual(['eu-west-1', true, 'AKID', 'SECRET', 'table', 'function', 'function'])
  })

  it('stop at a call to an AWS service, a signature or a Google token, naming what is not emulated', () => {
    const [lambda, sign, gcp] = lua(`local aws = require("resty.aws")({ region = "eu-west-1" })
      return select(2, pcall(function() return aws:Lambda() end)),
        select(2, pcall(require "resty.aws.request.sign", {}, {})),
        select(2, pcall(require("resty.gcp.request.credentials.accesstoken").new, nil, "{}"))`) as string[]
    expect(String(lambda)).toMatch(/resty\.aws:Lambda\(\) is not emulated by broker: AWS is not emulated/)
    expect(String(sign)).toMatch(/resty\.aws\.request\.sign\(\) is not emulated by broker: AWS request signing/)
    expect(String(gcp)).toMatch(/accesstoken\.new\(\) is not emulated by broker: Google Cloud authentication/)
  })
})

describe('a required record a config leaves out', () => {
  const process = (conf: unknown) =>
    lua(
      `local logging = { type = "record", required = true, fields = {
         { log_statistics = { type = "boolean", required = true, default = false } },
         { level = { type = "string", required = true } } } }
       local stats = { type = "record", required = true, fields = {
         { on = { type = "boolean", required = true, default = true } } } }
       local schema = { fields = { { config = { type = "record", fields = { { logging = logging }, { stats = stats } } } } } }
       return require("broker.schema").process(schema, ...)`,
      conf,
    )

  it("is filled with its fields' defaults, as Kong expands it; a field without one is what is missing", () => {
    expect(process({})).toEqual([undefined, { 'logging.level': 'required field missing' }])
    expect(process({ logging: { level: 'x' } })).toEqual([
      { logging: { log_statistics: false, level: 'x' }, stats: { on: true } },
    ])
    expect(process({ logging: null })).toEqual([undefined, { logging: 'required field missing' }])
  })
})
