/**
 * The command words a user typed, from oclif's id for an unknown command line: oclif joins every
 * word with ":" (`broker hash-chek abc` → `hash-chek:abc`), arguments included, so the id is cut
 * after the first word that is not a topic (`pdk rn x.json` → `pdk:rn`).
 */
export function typedCommand(id: string, isTopic: (id: string) => boolean): string {
  const words = id.split(':')
  let end = 1
  while (end < words.length && isTopic(words.slice(0, end).join(':'))) end++
  return words.slice(0, end).join(':')
}

/** The known command id closest to `typed` by edit distance, when it is close enough to be a typo. */
export function closestCommand(typed: string, ids: readonly string[]): string | undefined {
  let best: { id: string; distance: number } | undefined
  for (const id of ids) {
    const distance = editDistance(typed, id)
    if (!best || distance < best.distance) best = { id, distance }
  }
  // A third of the word may be wrong (stroe → store is 2 of 5); farther is another word.
  return best && best.distance <= Math.max(2, Math.floor(typed.length / 3)) ? best.id : undefined
}

/**
 * Ours rather than a library's: fast-levenshtein (what @oclif/plugin-not-found uses) counts a swap as
 * two edits, so `stroe` is as close to `serve` as to `store`.
 * Edit distance counting a swap of two neighbours as one edit (optimal string alignment), since
 * swapped letters are the commonest typo: `stroe` is 1 from `store` but 2 from `serve`.
 */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      const row = d[i]!
      const up = d[i - 1]!
      row[j] = Math.min(up[j]! + 1, row[j - 1]! + 1, up[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1)
    }
  }
  return d[a.length]![b.length]!
}
