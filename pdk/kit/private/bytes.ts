import { isUtf8 } from 'node:buffer'

/**
 * A body as the kit hands it out: text when its bytes are UTF-8, else the bytes themselves, which a Lua plugin
 * gets as a string byte for byte (nginx's bodies are bytes: a gzip-encoded answer, an image). Text made of
 * bytes that are not UTF-8 would have replaced them (a service's gzip body, 300 bytes, read back as 520).
 */
export const bodyOut = (bytes: Buffer): string | Buffer => (isUtf8(bytes) ? bytes.toString('utf8') : bytes)

/** Whether a plugin set a body: text, or bytes (a Lua string that is not UTF-8). */
export const isBody = (v: unknown): v is string | Buffer => typeof v === 'string' || Buffer.isBuffer(v)
