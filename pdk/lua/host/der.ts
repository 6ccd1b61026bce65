/** A small DER reader for what node:crypto does not say of a certificate (x509.ts): elements, OIDs, integers. */

export interface Der {
  tag: number
  /** The value's bytes. */
  value: Buffer
  /** Where the next element starts. */
  end: number
}

/** One DER element at `at`. */
export function readDer(buf: Buffer, at: number): Der {
  const tag = buf[at]!
  let len = buf[at + 1]!
  let start = at + 2
  if (len & 0x80) {
    const n = len & 0x7f
    len = 0
    for (let i = 0; i < n; i++) len = len * 256 + buf[start + i]!
    start += n
  }
  if (start + len > buf.length) throw new Error('truncated DER')
  return { tag, value: buf.subarray(start, start + len), end: start + len }
}

/** The elements of a constructed value. */
export function children(value: Buffer): Der[] {
  const out: Der[] = []
  for (let at = 0; at < value.length;) {
    const d = readDer(value, at)
    out.push(d)
    at = d.end
  }
  return out
}

export /** An OBJECT IDENTIFIER's dotted form. */
function oid(value: Buffer): string {
  const parts = [Math.floor(value[0]! / 40), value[0]! % 40]
  let n = 0
  for (const b of value.subarray(1)) {
    n = n * 128 + (b & 0x7f)
    if (!(b & 0x80)) {
      parts.push(n)
      n = 0
    }
  }
  return parts.join('.')
}

/** A small unsigned INTEGER's value. */
export const int = (value: Buffer): number => value.reduce((n, b) => n * 256 + b, 0)
