/** A key and what it does, as the help line shows it. */
export type KeyItem = readonly [key: string, does: string]
export type KeyHelp = readonly KeyItem[]

const SEP = 2
const itemWidth = ([key, does]: KeyItem) => key.length + (does ? 1 + does.length : 0)

/** Greedy lines of items no wider than `width`. */
function pack(items: KeyHelp, width: number): KeyItem[][] {
  const lines: KeyItem[][] = []
  let used = 0
  for (const item of items) {
    const w = itemWidth(item)
    const line = lines.at(-1)
    if (line && used + SEP + w <= width) {
      line.push(item)
      used += SEP + w
    } else {
      lines.push([item])
      used = w
    }
  }
  return lines
}

/**
 * The help line for a terminal `width` wide: one line when it fits, else two; when two are not
 * enough, the panel's keys lose their words. The global keys (how to quit) are always on it.
 */
export function helpLayout(panel: KeyHelp, global: KeyHelp, width: number, maxLines = 2): KeyItem[][] {
  const room = width - 1
  const full = pack([...panel, ...global], room)
  if (full.length <= maxLines) return full
  const short = pack([...panel.map(([key]) => [key, ''] as const), ...global], room)
  if (short.length <= maxLines) return short
  // Narrower still: the global keys get the last line whole.
  return [...pack(panel, room).slice(0, maxLines - 1), ...pack(global, room)].slice(-maxLines)
}
