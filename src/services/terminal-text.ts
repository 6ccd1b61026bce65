/**
 * Control characters in text the CLI prints: C0 (but tab and newline), DEL and C1 (0x9b is a
 * one-byte CSI to some terminals), and the bidirectional overrides and isolates that reorder what
 * a line shows. A walked page, a provider's answer or a stored field may hold any of them.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

const visible = (c: string): string => {
  const code = c.charCodeAt(0)
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
}

/**
 * Text safe for a terminal: every control character shown as an escape (`\x1b`, `\x07`, `\u202e`),
 * so nothing printed can set the clipboard (OSC 52), the title, clear the screen or move the cursor.
 * Tabs and newlines stay. Every human printer of the CLI goes through this (see BrokerCommand);
 * `--json` output needs nothing: JSON.stringify escapes control characters itself.
 */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, visible)
}
