/**
 * `broker pdk test` as whole processes: Kong's plugin template's three spec files in one run, and one
 * access spec of a bundled plugin (request-size-limiting's, 25 cases) in a checkout of Kong, each
 * against `broker --version` (the CLI's start, measured in the same run). Targets: the template under
 * 3 s wall, the access spec under 2 s. The checkouts are not in the repository: KONG_PLUGIN_TEMPLATE
 * names one of Kong/kong-plugin, KONG_SRC one of Kong/kong (a section without its variable is skipped,
 * saying so).
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { BIN, median, once, type Sample } from './whole-process.js'

const ACCESS_SPEC = 'spec/03-plugins/12-request-size-limiting/01-access_spec.lua'

interface Case {
  label: string
  root: string | undefined
  variable: string
  args: string[]
  targetMs: number
}

const ms = (s: number) => Math.round(s * 1000)

/** Prints each case's median wall and CPU time, its ratio to `broker --version` and its target's verdict. */
export function pdkTestBench(runs = 5): void {
  const cases: Case[] = [
    {
      label: "the plugin template's 3 spec files",
      root: process.env.KONG_PLUGIN_TEMPLATE,
      variable: 'KONG_PLUGIN_TEMPLATE',
      args: ['pdk', 'test'],
      targetMs: 3000,
    },
    {
      label: 'request-size-limiting access (25 cases)',
      root: process.env.KONG_SRC,
      variable: 'KONG_SRC',
      args: ['pdk', 'test', ACCESS_SPEC],
      targetMs: 2000,
    },
  ]
  const start: Sample[] = []
  once([BIN, '--version'])
  for (const c of cases) {
    if (!c.root || !existsSync(join(c.root, c.args[2] ?? 'spec'))) {
      console.log(`pdk test: ${c.label}: skipped (set ${c.variable} to a checkout)`)
      continue
    }
    once([BIN, ...c.args], c.root)
    const samples: Sample[] = []
    for (let i = 0; i < runs; i++) {
      start.push(once([BIN, '--version']))
      samples.push(once([BIN, ...c.args], c.root))
    }
    const wall = median(samples.map((s) => s.wall))
    const floor = median(start.map((s) => s.wall))
    const cpu = samples.every((s) => s.cpu !== undefined) ? median(samples.map((s) => s.cpu!)) : undefined
    const verdict = ms(wall) < c.targetMs ? 'ok' : 'MISS'
    console.log(
      `pdk test: ${c.label.padEnd(40)} wall ${ms(wall)} ms${cpu === undefined ? '' : `, cpu ${ms(cpu)} ms`} ` +
        `(median of ${runs}); ${(wall / floor).toFixed(1)}x broker --version (${ms(floor)} ms); ` +
        `target < ${c.targetMs} ms: ${verdict}`,
    )
  }
}
