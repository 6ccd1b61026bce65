import { Text } from 'ink'
import { render } from 'ink-testing-library'
import { useLayoutEffect, useState } from 'react'
import { describe, expect, it } from 'vitest'
import { settle } from '../../test/helpers/ink.js'
import { useKeys } from './useKeys.js'

/** A panel switcher: `a` activates the panel, which records the keys it gets. */
function Switcher({ got, onCommit }: { got: string[]; onCommit: (active: boolean) => void }) {
  const [active, setActive] = useState(false)
  useKeys((input) => {
    if (input === 'a') setActive(true)
  })
  useKeys((input) => void got.push(input), { isActive: active })
  useLayoutEffect(() => {
    onCommit(active)
  })
  return <Text>{active ? 'active' : 'idle'}</Text>
}

describe('useKeys', () => {
  it('gives a panel the key read right after the switch to it committed, before its passive effects ran', async () => {
    const got: string[] = []
    const committed = { active: false }
    const { stdin } = render(<Switcher got={got} onCommit={(active) => (committed.active = active)} />)
    await settle()
    stdin.write('a')
    // React commits the switch within microtasks; Ink subscribes a panel's input in a passive effect,
    // on a later task. A key read in between (a loaded machine) must still reach the panel.
    for (let i = 0; i < 100 && !committed.active; i++) await new Promise((r) => setImmediate(r))
    expect(committed.active).toBe(true)
    stdin.write('x')
    await settle()
    expect(got).toEqual(['x'])
  })

  it('gives an inactive panel nothing', async () => {
    const got: string[] = []
    const { stdin } = render(<Switcher got={got} onCommit={() => {}} />)
    await settle()
    stdin.write('x')
    await settle()
    expect(got).toEqual([])
  })
})
