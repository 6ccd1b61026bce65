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
    ['src/broker/endpoints/run.ts', "import { x } from '../../ui/types.js'"],
    ['src/services/dashboard/index.ts', "import { x } from '../../ui/render-dashboard.js'"],
    ['src/log.ts', "import { x } from './broker/endpoints/deliver.js'"],
    ['src/config/load.ts', "import { x } from '../services/serve/index.js'"],
    ['flows/lib/oauth2.ts', "import { x } from '../../src/broker/ids.js'"],
    ['pdk/kit.ts', "import { x } from '../src/errors/index.js'"],
  ])('refuses an upward import in %s', async (file, code) => {
    expect(await layerErrors(file, `${code}\nexport const y = x\n`)).toHaveLength(1)
  })

  it.each([
    ['src/services/dashboard/index.ts', "import { x } from '../../broker/index.js'"],
    ['src/ui/useFlows.ts', "import { x } from '../services/dashboard/source.js'"],
    ['src/broker/endpoints/run.ts', "import { x } from '../../../flows/contract.js'"],
    ['commands/serve.ts', "import { x } from '../src/services/serve/index.js'"],
  ])('allows a downward import in %s', async (file, code) => {
    expect(await layerErrors(file, `${code}\nexport const y = x\n`)).toEqual([])
  })
})
