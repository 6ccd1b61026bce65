/**
 * The spec's environment: what helpers.setenv and helpers.unsetenv changed. Kong started by
 * start_kong inherits it, so the VM's os.getenv reads it first, and Kong's env vault reads it
 * (`vault.env`, the object the kit's vault looks names up in, changed in place).
 */
export class SpecEnv {
  /** The variables set, by name: Kong's env vault sees these. */
  readonly vault: Record<string, string> = {}
  private readonly unset = new Set<string>()

  set(name: string, value: string): void {
    this.unset.delete(name)
    this.vault[name] = value
  }

  /** Takes a variable away, the VM's own too (HOME). */
  remove(name: string): void {
    delete this.vault[name]
    this.unset.add(name)
  }

  /** The value set, null when taken away, undefined when the spec never touched it. */
  get(name: string): string | null | undefined {
    if (this.unset.has(name)) return null
    return Object.hasOwn(this.vault, name) ? this.vault[name] : undefined
  }
}
