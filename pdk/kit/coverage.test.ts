import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'
import { flatten, snakeCase, type KitTree } from './index.js'

// The kit's surface against the one list Kong publishes for JavaScript: kong-pdk's typings, generated
// from Kong's `kong/pdk/*.lua` (their header names the Kong version). A function there that the kit
// lacks fails this test unless it is listed below with the reason it is left out.
const LEFT_OUT: Record<string, string> = {
  'service.set_target_retry_callback':
    'takes a Lua function, which no plugin server can pass (kong-js-pdk sends its arguments as MessagePack)',
}

const typings = join(dirname(createRequire(import.meta.url).resolve('kong-pdk/package.json')), 'kong')

function declared(): { calls: string[]; version: string } {
  const calls: string[] = []
  let version = ''
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const file = join(dir, e.name)
      if (e.isDirectory()) walk(file)
      else if (e.name.endsWith('.d.ts')) {
        const text = readFileSync(file, 'utf8')
        version ||= /BASED ON Kong ([\d.x]+)/.exec(text)?.[1] ?? ''
        const module = relative(typings, file)
          .replace(/\.d\.ts$/, '')
          .replace(/\/?index$/, '')
          .split('/')
          .filter(Boolean)
        if (module.length === 0) continue
        for (const m of text.matchAll(/^\s{4}(\w+)\(/gm)) calls.push([...module, snakeCase(m[1]!)].join('.'))
      }
    }
  }
  walk(typings)
  return { calls: calls.sort(), version }
}

describe("the kit's surface", () => {
  const { calls, version } = declared()
  const kit = flatten(kitFor().kit as unknown as KitTree)
  // kong-js-pdk plugins call the web server module by Kong's name, nginx
  const has = (call: string) => kit.has(call) || kit.has(call.replace(/^nginx\./, 'webserver.'))

  it(`reads kong-pdk's typings (Kong ${version})`, () => {
    expect(version).toMatch(/^3\./)
    expect(calls.length).toBeGreaterThan(100)
  })

  it('has every function of the typings, or says why not', () => {
    const missing = calls.filter((c) => !has(c) && !Object.hasOwn(LEFT_OUT, c))
    expect(missing).toEqual([])
  })

  it('leaves out only functions the typings have', () => {
    expect(Object.keys(LEFT_OUT).filter((c) => !calls.includes(c))).toEqual([])
  })
})

describe('nginx.shared', () => {
  it('is the same per-request store as ctx.shared, as kong-pdk aliases them', () => {
    const { kit } = kitFor()
    kit.nginx.shared.set('who', 'alice')
    expect(kit.ctx.shared.get('who')).toBe('alice')
    expect(kit.nginx.get_subsystem()).toBe('http')
  })
})
