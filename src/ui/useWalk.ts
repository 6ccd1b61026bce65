import { useCallback, useRef, useState } from 'react'
import type { Hop } from '../services/walk/walker.js'
import type { StepWalker } from './types.js'

export interface WalkState {
  /** The URL the walk started from; undefined before a walk. */
  start?: string
  hops: readonly Hop[]
  /** The URL the next key press requests. */
  pending?: string
  /** Why the chain ended, once it has. */
  stopped?: string
  busy: boolean
  begin(url: string): void
  step(): void
  reset(): void
}

/** A redirect chain walked one hop per call of `step()`, with the CLI's Walker. */
export function useWalk(makeWalker: (url: string) => StepWalker): WalkState {
  const walker = useRef<StepWalker>(undefined)
  const [start, setStart] = useState<string>()
  const [hops, setHops] = useState<readonly Hop[]>([])
  const [pending, setPending] = useState<string>()
  const [stopped, setStopped] = useState<string>()
  const [busy, setBusy] = useState(false)
  const step = useCallback(() => {
    const w = walker.current
    if (!w || busy || w.stopped) return
    setBusy(true)
    w.next().then(
      (hop) => {
        if (walker.current !== w) return
        if (hop) setHops((h) => [...h, hop])
        setPending(w.pending)
        setStopped(w.stopped?.message)
        setBusy(false)
      },
      (err: Error) => {
        setStopped(err.message)
        setBusy(false)
      },
    )
  }, [busy])
  return {
    start,
    hops,
    pending,
    stopped,
    busy,
    begin: (url) => {
      walker.current = makeWalker(url)
      setStart(url)
      setHops([])
      setStopped(undefined)
      setPending(walker.current.pending)
    },
    step,
    reset: () => {
      walker.current = undefined
      setStart(undefined)
      setHops([])
      setPending(undefined)
      setStopped(undefined)
    },
  }
}
