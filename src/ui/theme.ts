/**
 * Colours of the dashboard, off when NO_COLOR is set to anything but "" (no-color.org). Only hues
 * go: bold, dim and inverse stay, so the selection and the active panel are still seen.
 */
export const colorsOn = (env: NodeJS.ProcessEnv = process.env): boolean => !env.NO_COLOR

const ON = colorsOn()

/** A colour for Ink's `color` prop, or undefined when colours are off. */
export function tint(color: string | undefined): string | undefined {
  return ON ? color : undefined
}
