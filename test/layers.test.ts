import { ESLint } from 'eslint'
import { describe, expect, it } from 'vitest'

// The layering rule of eslint.config.js, tried on imports written into files where they would sit.
const eslint = new ESLint({ cwd: new URL('..', import.meta.url).pathname })

async function layerErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath })
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message)
}

describe('the layers', () => {
  it.each([
    ['src/broker/ids.ts', "import { x } from '../services/serve/secrets.js'"],
    ['src/broker/http/routes/admin.ts', "import { x } from '../../../services/dashboard/source.js'"],
    ['src/broker/endpoints/callback.ts', "import { x } from '../../ui/types.js'"],
    ['src/broker/flow/transition.ts', "import { x } from '../../services/serve/secrets.js'"],
    ['src/broker/flow/step.ts', "import { x } from '../endpoints/callback.js'"],
    ['src/services/dashboard/index.ts', "import { x } from '../../ui/render-dashboard.js'"],
    ['src/log.ts', "import { x } from './broker/flow/deliver.js'"],
    ['src/config/load.ts', "import { x } from '../services/serve/index.js'"],
    ['flows/lib/oauth2.ts', "import { x } from '../../src/broker/ids.js'"],
    ['pdk/kit/index.ts', "import { x } from '../../src/errors/index.js'"],
    ['pdk/runner/index.ts', "import { x } from '../../src/errors/index.js'"],
    ['util/closest.ts', "import { x } from '../src/errors/index.js'"],
    ['util/closest.ts', "import { x } from '../pdk/kit/index.js'"],
    // inside pdk/: kit → fixture → external → faces → runner
    ['pdk/kit/request/index.ts', "import { x } from '../../lua/runtime.js'"],
    ['pdk/kit/context.ts', "import { x } from '../fixture/index.js'"],
    ['pdk/kit/private/trace.ts', "import { x } from '../../runner/record.js'"],
    ['pdk/fixture/outbound.ts', "import { x } from '../runner/record.js'"],
    ['pdk/external/bridge.ts', "import { x } from '../plugin-server/index.js'"],
    ['pdk/js/facade.ts', "import { x } from '../plugin-server/remote.js'"],
    ['pdk/plugin-server/remote.ts', "import { x } from '../js/loader.js'"],
    ['pdk/lua/plugin.ts', "import { x } from '../runner/plugins.js'"],
    ['pdk/lua/host/http.ts', "import { x } from '../../js/facade.js'"],
    // the runner sees handlers only: its loader alone imports the faces
    ['pdk/runner/index.ts', "import { x } from '../lua/runtime.js'"],
    ['pdk/runner/worker.ts', "import { x } from '../plugin-server/index.js'"],
  ])('refuses an upward import in %s', async (file, code) => {
    expect(await layerErrors(file, `${code}\nexport const y = x\n`)).toHaveLength(1)
  })

  it.each([
    ['src/services/dashboard/index.ts', "import { x } from '../../broker/index.js'"],
    ['src/ui/useFlows.ts', "import { x } from '../services/dashboard/source.js'"],
    ['src/broker/flow/step.ts', "import { x } from '../../../flows/contract.js'"],
    ['commands/serve.ts', "import { x } from '../src/services/serve/index.js'"],
    ['src/services/store/record.ts', "import { x } from '../../../util/closest.js'"],
    ['pdk/fixture/index.ts', "import { x } from '../../util/source-position.js'"],
    ['pdk/kit/context.ts', "import { x } from '../fixture/fixture-types.generated.js'"],
    ['pdk/fixture/setup.ts', "import { x } from '../kit/ip.js'"],
    ['pdk/js/facade.ts', "import { x } from '../external/bridge.js'"],
    ['pdk/lua/plugin.ts', "import { x } from '../fixture/setup.js'"],
    ['pdk/runner/plugins.ts', "import { x } from '../lua/plugin.js'"],
    ['pdk/runner/index.ts', "import { x } from '../kit/private/handler.js'"],
  ])('allows a downward import in %s', async (file, code) => {
    expect(await layerErrors(file, `${code}\nexport const y = x\n`)).toEqual([])
  })
})
