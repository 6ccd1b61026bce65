import { useEffect, useState } from 'react'
import type { FlowEvent } from '../broker/events.js'
import { FlowLog } from '../broker/flow-log.js'
import type { FlowEventSource } from '../services/dashboard/source.js'

/** The flows of an event source, newest first: its snapshot, then every event as it arrives. */
export function useFlows(source: FlowEventSource): readonly FlowEvent[] {
  const [flows, setFlows] = useState<readonly FlowEvent[]>([])
  useEffect(() => {
    // One log per subscription, the same bounded log the admin API keeps: long sessions do not pile up old flows.
    const log = new FlowLog()
    let live = true
    const changed = () => setFlows(log.snapshot().reverse())
    const listener = (event: FlowEvent) => {
      log.add(event)
      changed()
    }
    source.subscribe(listener)
    source
      .snapshot()
      .then((events) => {
        // Events that arrived meanwhile are newer than the snapshot: they stay on top.
        if (!live) return
        log.addOlder(events)
        changed()
      })
      .catch(() => undefined)
    return () => {
      live = false
      source.unsubscribe(listener)
    }
  }, [source])
  return flows
}
