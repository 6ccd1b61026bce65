/**
 * Everything the spec runner takes from the rest of the PDK emulator, in one place: the Lua
 * runtime `pdk run` boots, the runner that replays a request through the kit, and their types.
 */
export { LuaRuntime } from '../lua/runtime.js'
export { LuaError, type LuaVm } from '../lua/vm.js'
export { luaPathTemplates } from '../lua/modules.js'
export { kongConfiguration } from '../lua/configuration.js'
export { buildContext, stableUuid } from '../fixture/setup.js'
export { createKit } from '../kit/index.js'
export { runScenario, type ScenarioResult } from '../runner/index.js'
export { kongOrder, preparePlugins, type PluginHandler } from '../runner/plugins.js'
export { startWorkers } from '../runner/worker.js'
export type { UpstreamSnapshot } from '../runner/record.js'
export type { Fixture, LoadedFixture } from '../fixture/index.js'
export { FixtureError } from '../fixture/index.js'
export { configKeys, luaHandler } from '../lua/plugin.js'
export type { HeadersTable } from '../kit/private/headers.js'
export type { Context } from '../kit/context.js'
export { createVm } from '../lua/engine.js'
export { VirtualClock, type Clock } from '../kit/private/clock.js'
export { textOrBytes } from '../kit/private/bytes.js'
export { GRPC_MESSAGES } from '../kit/response/send.js'
