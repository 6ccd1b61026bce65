import { useCallback, useMemo, useState } from 'react'
import type { Replay } from '../services/dashboard/pdk.js'
import type { PdkReplayer } from './types.js'

export interface PdkReplayState {
  fixtures: readonly string[]
  replay?: Replay
  /** How many steps are shown: 1 … steps.length, then steps.length + 1 for the verdict. */
  shown: number
  error?: string
  busy: boolean
  load(file: string): void
  next(): void
  previous(): void
  close(): void
}

/** The fixtures of the folder and the replay being stepped through. */
export function usePdkReplay(pdk: PdkReplayer): PdkReplayState {
  // Listed once per folder, while rendering: a folder that cannot be read is an error shown instead.
  const listing = useMemo((): { fixtures: readonly string[]; error?: string } => {
    try {
      return { fixtures: pdk.list() }
    } catch (err) {
      return { fixtures: [], error: `Cannot read ${pdk.dir}: ${(err as Error).message}` }
    }
  }, [pdk])
  const [replay, setReplay] = useState<Replay>()
  const [shown, setShown] = useState(0)
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  const load = useCallback(
    (file: string) => {
      setBusy(true)
      setError(undefined)
      pdk.replay(file).then(
        (r) => {
          setReplay(r)
          setShown(1)
          setBusy(false)
        },
        (err: Error) => {
          setError(err.message)
          setBusy(false)
        },
      )
    },
    [pdk],
  )
  const last = replay ? replay.steps.length + 1 : 0
  return {
    fixtures: listing.fixtures,
    replay,
    shown,
    error: error ?? listing.error,
    busy,
    load,
    next: () => setShown((s) => Math.min(last, s + 1)),
    previous: () => setShown((s) => Math.max(1, s - 1)),
    close: () => {
      setReplay(undefined)
      setShown(0)
    },
  }
}
