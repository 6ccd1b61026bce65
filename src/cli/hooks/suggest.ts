import { closest } from '../../../util/closest.js'

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
export const closestCommand = (typed: string, ids: readonly string[]): string | undefined => closest(typed, ids)
