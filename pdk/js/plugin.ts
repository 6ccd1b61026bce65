/**
 * A fixture's kong-js-pdk plugin entry loaded: its module imported (a module that does not load is a fixture
 * error, with the place of a syntax error) and described as Kong knows an external plugin.
 */
import { basename, extname, isAbsolute, relative, resolve } from 'node:path'
import { placeText, syntaxErrorPlace } from '../../util/source-position.js'
import { kongConfig } from '../external/config.js'
import type { ExternalPlugin } from '../external/plugin.js'
import { FixtureError, type LoadedFixture } from '../fixture/index.js'
import { loadPluginModule, serverName, serverPhases, type PluginModule } from './loader.js'

/** The entry as the runner has it: its slot, the fixture's name, its id and config, the module file. */
export interface JsPluginEntry {
  index: number
  name: string
  id: string
  config: Record<string, unknown>
  module: string
}

/** Imports the entry's module; the plugin both JS faces run, and the module the in-process one builds it from. */
export async function loadJsPlugin(
  loaded: LoadedFixture,
  entry: JsPluginEntry,
): Promise<{ plugin: ExternalPlugin; module: PluginModule }> {
  const abs = isAbsolute(entry.module) ? entry.module : resolve(loaded.dir, entry.module)
  let module: PluginModule
  try {
    module = await loadPluginModule(abs)
  } catch (e) {
    const place = await syntaxErrorPlace(e, abs)
    const reason =
      (e as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND'
        ? `cannot find module ${abs}`
        : place
          ? `${placeText(shownPath(place.file), place)}: ${(e as Error).message}`
          : (e as Error).message
    throw new FixtureError(loaded.file, `$.plugins[${entry.index}].module`, reason)
  }
  // the plugin server names a module by its Name or its file; the fixture's name stands for the file
  const fileName = fileNameOf(entry.name, abs)
  const registered = serverName(module, fileName)
  const plugin: ExternalPlugin = {
    index: entry.index,
    name: entry.name,
    id: entry.id,
    config: entry.config,
    path: abs,
    fileName,
    serverName: registered,
    priority: module.Priority ?? 0,
    ...(module.Version !== undefined ? { version: module.Version } : {}),
    phases: serverPhases(module),
    kongConfig: kongConfig(registered, entry.id, module.Schema, entry.config, entry.index + 1),
  }
  return { plugin, module }
}

/** A path as the CLI shows it: relative to the current folder when under it, else as it is. */
function shownPath(file: string): string {
  const rel = relative(process.cwd(), file)
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file
}

const fileNameOf = (name: string, path: string): string =>
  name.replace(/[^A-Za-z0-9_-]/g, '_') || basename(path, extname(path))
