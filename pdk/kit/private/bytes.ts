import { isUtf8 } from 'node:buffer'

/**
 * Bytes as the kit hands them out (a body, a decoded argument): text when they are UTF-8, else the bytes
 * themselves, which a Lua plugin gets as a string byte for byte (nginx's bodies are bytes: a gzip-encoded answer,
 * an image). Text made of bytes that are not UTF-8 would have replaced them (a 300-byte gzip body read back as 520).
 */
export const textOrBytes = (bytes: Buffer): string | Buffer => (isUtf8(bytes) ? bytes.toString('utf8') : bytes)

/** Whether a value is a Lua string as the kit takes one: text, or bytes (a Lua string that is not UTF-8). */
export const isStringOrBytes = (v: unknown): v is string | Buffer => typeof v === 'string' || Buffer.isBuffer(v)
