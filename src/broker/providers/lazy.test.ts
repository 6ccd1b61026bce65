import { describe, expect, it, vi } from 'vitest'

describe('provider catalogue loading', () => {
  it('is read only when a record names a provider, and once', async () => {
    vi.resetModules()
    const { catalogueLoaded, catalogue } = await import('./catalogue.js')
    const { expandProvider } = await import('./expand.js')
    expandProvider({ auth_type: 'oauth', auth_version: '2', auth_leg: '3', client_id: 'c', scope: 'a b' })
    expect(catalogueLoaded()).toBe(false)
    expandProvider({ auth_type: 'oauth', provider: 'github' })
    expect(catalogueLoaded()).toBe(true)
    const first = catalogue()
    expandProvider({ auth_type: 'oauth', provider: 'gitlab' })
    expect(catalogue()).toBe(first)
  })
})
