/** The engine behind vm.ts's interface, wasmoon today: imported on first use only, so a run without Lua never loads it. */
import type { LuaVm, LuaVmOptions } from './vm.js'

/** Creates a VM with Lua's standard libraries open. */
export async function createVm(options: LuaVmOptions): Promise<LuaVm> {
  const { createWasmoonVm } = await import('./wasmoon.js')
  return createWasmoonVm(options)
}
