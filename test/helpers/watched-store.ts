import type { FlowStore } from '../../src/broker/store/flow-store.js'

/** The writes a test may make fail: the two a flow's completion sends together. */
export type StoreFaults = Partial<Pick<FlowStore, 'putResult' | 'advance'>>

/**
 * `store` with its putResult and advance wrapped (by `faults`, when given, instead of the store's own):
 * `log` records when each is sent and when answered, so a test sees whether two writes left in one turn.
 */
export function watchedStore(store: FlowStore, faults: StoreFaults = {}): { store: FlowStore; log: string[] } {
  const log: string[] = []
  const watched = Object.create(store) as FlowStore
  const put = faults.putResult ?? store.putResult.bind(store)
  const advance = faults.advance ?? store.advance.bind(store)
  watched.putResult = (code, result) => {
    log.push('putResult sent')
    return put(code, result).finally(() => log.push('putResult answered'))
  }
  watched.advance = (from, next, short) => {
    log.push('advance sent')
    return advance(from, next, short).finally(() => log.push('advance answered'))
  }
  return { store: watched, log }
}
