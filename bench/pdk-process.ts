/**
 * `broker pdk run` of one Lua fixture against the same run of a JS fixture whose plugin makes the
 * same kit calls (lua-hello and kong-style-hello), as whole processes in turn (JS, Lua, JS, Lua …):
 * what a Lua plugin adds to a run, the VM's loading included. Target: the median difference within
 * +150 ms. Bounded: `pairs` pairs, fewer when `seconds` have passed.
 */
import { BIN, median, once, type Sample } from './whole-process.js'

const TARGET_MS = 150
const JS_FIXTURE = 'fixtures/pdk/kong-style-hello.json'
const LUA_FIXTURE = 'fixtures/pdk/lua-hello.json'

/** Prints the median Lua − JS difference of wall and CPU time, with the target's verdict. */
export function luaProcessComparison(pairs = 11, seconds = 60): void {
  const js = [BIN, 'pdk', 'run', JS_FIXTURE]
  const lua = [BIN, 'pdk', 'run', LUA_FIXTURE]
  once(js)
  once(lua)
  const end = performance.now() + seconds * 1000
  const runs: Array<[Sample, Sample]> = []
  while (runs.length < pairs && (runs.length < 3 || performance.now() < end)) runs.push([once(js), once(lua)])
  const ms = (s: number) => Math.round(s * 1000)
  const line = (label: string, get: (s: Sample) => number | undefined) => {
    const diffs = runs.flatMap(([j, l]) => {
      const a = get(j)
      const b = get(l)
      return a === undefined || b === undefined ? [] : [b - a]
    })
    if (!diffs.length) return
    const d = ms(median(diffs))
    const jsMs = ms(median(runs.map(([j]) => get(j) ?? 0)))
    const luaMs = ms(median(runs.map(([, l]) => get(l) ?? 0)))
    const verdict = d <= TARGET_MS ? 'ok' : 'MISS'
    console.log(
      `  ${label.padEnd(4)} JS ${jsMs} ms, Lua ${luaMs} ms (medians); Lua − JS pair by pair: median ` +
        `${d >= 0 ? '+' : ''}${d} ms (${ms(Math.min(...diffs))} … ${ms(Math.max(...diffs))}); ` +
        `target +${TARGET_MS} ms: ${verdict}`,
    )
  }
  console.log(`whole process: broker pdk run ${LUA_FIXTURE}  vs  ${JS_FIXTURE} (${runs.length} pairs, medians)`)
  line('wall', (s) => s.wall)
  line('cpu', (s) => s.cpu)
}
