/** A configuration that cannot work: `broker serve` and the commands that load a config refuse to start (exit 2). No HTTP status: no request is ever answered with one. */
import { type ErrorSpec, type MessageSpec } from './spec.js'

export const CONFIG_ERRORS = {
  CONFIG_INVALID: {
    exit: 2,
    next: 'Fix the configuration key named above; `broker serve --help` lists every option.',
  },
} as const satisfies Record<string, ErrorSpec & { readonly status?: never }>

/** The messages of these codes, as templates (see index.ts). */
export const CONFIG_MESSAGES = {
  // CONFIG_INVALID
  configUnreadable: {
    code: 'CONFIG_INVALID',
    text: (v: { file: string }) => `Cannot read the config file ${v.file}: it does not exist or is not readable.`,
    details: (v: { file: string }) => ({ file: v.file }),
    next: 'Check the path given to -c/--config (relative to the current directory), or leave -c out to use ./config/default.js or the built-in defaults.',
  },
  configLoadFailed: {
    code: 'CONFIG_INVALID',
    text: (v: { file: string; reason: string }) => `Cannot load the config file ${v.file}: ${v.reason}`,
    details: (v: { file: string }) => ({ file: v.file }),
    next: 'Fix the config file where the message says (for a .js file, `node --check <file>` shows a syntax error too).',
  },
  configNotObject: {
    code: 'CONFIG_INVALID',
    text: (v: { file: string }) =>
      `The config file ${v.file} must export an object (export default {…} or module.exports = {…}).`,
    details: (v: { file: string }) => ({ file: v.file }),
  },
  /** Every problem on its own line; `key` is the first key named. */
  configInvalid: {
    code: 'CONFIG_INVALID',
    text: (v: { problems: readonly string[] }) => `Invalid configuration:\n  ${v.problems.join('\n  ')}`,
    details: (v: { key?: string }) => ({ key: v.key }),
  },
  pidFileUnwritable: {
    code: 'CONFIG_INVALID',
    text: (v: { file: string; reason: string }) => `Cannot write the pid file ${v.file} (pid.dir): ${v.reason}`,
    details: { key: 'pid.dir' },
  },
  pidFileInUse: {
    code: 'CONFIG_INVALID',
    text: (v: { file: string; pid: number }) => `The pid file ${v.file} belongs to a running broker (pid ${v.pid}).`,
    details: { key: 'pid.dir' },
    next: 'Stop that broker first, or start this one with another --port or --pid-dir.',
  },
  // ── issue 27 (ops) ──
  pidFileNotPlain: {
    code: 'CONFIG_INVALID',
    text: (v: { file: string }) =>
      `The pid file ${v.file} is a symbolic link or has other names (hard links); serve writes only a plain file of its own.`,
    details: { key: 'pid.dir' },
    next: 'Remove that file (check who planted it), or point --pid-dir at a directory only you can write.',
  },
  sessionSecretNotShared: {
    code: 'CONFIG_INVALID',
    text: (v: { prefix: string; generated: boolean }) =>
      `Another broker instance uses this Redis with store.prefix "${v.prefix}" and ${v.generated ? 'this one has no session.secret set (one was generated for this run)' : 'a session.secret generated for its own run'}: flows started on one would be unknown to the other.`,
    details: { key: 'session.secret' },
    next: 'Set the same session.secret (BROKER_SESSION_SECRET) on every instance that shares this Redis, or give each its own store.prefix.',
  },
  // ── end issue 27 (ops) ──
  sharedSecretsMissing: {
    code: 'CONFIG_INVALID',
    text: (v: { missing: readonly string[]; shared: 'cluster' | 'sentinels' }) =>
      `${v.missing.join(' and ')} must be set when several broker instances share the store (store.${v.shared}): set the same value on every instance (BROKER_SESSION_SECRET).`,
    details: (v: { missing: readonly string[] }) => ({ key: v.missing[0] }),
  },
} as const satisfies Record<string, MessageSpec>
