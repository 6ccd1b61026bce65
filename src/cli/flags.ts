import * as Flags from '@oclif/core/flags'
import { DEFAULT_BROKER_URL } from '../services/broker-client.js'

// Flags several commands share. Each is an oclif flag definition: call it, and pass options to
// override (a command-specific summary), as with Flags.string().

/** `--broker`: the broker to talk to, from BROKER_URL, else the local one. */
export const brokerFlag = Flags.custom<string>({
  summary: 'The broker URL.',
  env: 'BROKER_URL',
  default: DEFAULT_BROKER_URL,
})

/** `--broker` for a command that works out its own default when neither the flag nor BROKER_URL is given. */
export const brokerFlagWithoutDefault = Flags.custom<string>({ summary: 'The broker URL.', env: 'BROKER_URL' })

/** `--api-key`: what a client sends to a broker that has api.keys. */
export const apiKeyFlag = Flags.custom<string>({
  summary: "One of the broker's api.keys, when it has any; prefer BROKER_API_KEY.",
  env: 'BROKER_API_KEY',
})

/** `-c, --config`: the config file of a command that starts a broker. */
export const configFileFlag = Flags.custom<string>({
  char: 'c',
  summary: 'Config file (.js, .mjs, .cjs, .json), relative to the current directory.',
})
