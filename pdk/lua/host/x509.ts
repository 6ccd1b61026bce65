/**
 * What broker's resty.openssl.x509 needs: a certificate read once (PEM or DER) by node:crypto's X509Certificate,
 * and the fields it does not expose (the version, the signature algorithm, basic constraints, CRL URLs) read from
 * the DER with a small walker. Failures answer `[undefined, message]`, the library's `nil, err`.
 */
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto'
import { bytesOf } from './codec.js'
import { children, int, oid, readDer } from './der.js'
import type { HostOp } from './types.js'

/** The signature algorithms certificates use: OpenSSL's short name, NID and digest. */
const SIGNATURES: Record<string, [string, number, string | undefined]> = {
  '1.2.840.113549.1.1.5': ['RSA-SHA1', 65, 'SHA1'],
  '1.2.840.113549.1.1.11': ['RSA-SHA256', 668, 'SHA256'],
  '1.2.840.113549.1.1.12': ['RSA-SHA384', 669, 'SHA384'],
  '1.2.840.113549.1.1.13': ['RSA-SHA512', 670, 'SHA512'],
  '1.2.840.113549.1.1.10': ['RSASSA-PSS', 912, undefined],
  '1.2.840.10045.4.1': ['ecdsa-with-SHA1', 416, 'SHA1'],
  '1.2.840.10045.4.3.2': ['ecdsa-with-SHA256', 794, 'SHA256'],
  '1.2.840.10045.4.3.3': ['ecdsa-with-SHA384', 795, 'SHA384'],
  '1.2.840.10045.4.3.4': ['ecdsa-with-SHA512', 796, 'SHA512'],
  '1.3.101.112': ['ED25519', 1087, undefined],
  '1.3.101.113': ['ED448', 1088, undefined],
}

/** What the DER holds that X509Certificate does not say. */
function fromDer(der: Buffer) {
  const [tbs, sigAlg] = children(readDer(der, 0).value)
  const fields = children(tbs!.value)
  // version is [0] EXPLICIT, absent for v1 (0)
  const version = fields[0]!.tag === 0xa0 ? int(children(fields[0]!.value)[0]!.value) : 0
  const signature = oid(children(sigAlg!.value)[0]!.value)
  const spki = fields.find((f, i) => i > 0 && f.tag === 0x30 && children(f.value)[1]?.tag === 0x03)
  const extensions = new Map<string, { critical: boolean; value: Buffer }>()
  const extField = fields.find((f) => f.tag === 0xa3)
  if (extField) {
    for (const ext of children(children(extField.value)[0]!.value)) {
      const parts = children(ext.value)
      const critical = parts[1]?.tag === 0x01 && parts[1].value[0] !== 0
      extensions.set(oid(parts[0]!.value), { critical, value: parts[parts.length - 1]!.value })
    }
  }
  let basic: { ca: boolean; pathlen?: number } | undefined
  const bc = extensions.get('2.5.29.19')
  if (bc) {
    const parts = children(readDer(bc.value, 0).value)
    const ca = parts.find((p) => p.tag === 0x01)
    const pathlen = parts.find((p) => p.tag === 0x02)
    basic = { ca: ca !== undefined && ca.value[0] !== 0, ...(pathlen ? { pathlen: int(pathlen.value) } : {}) }
  }
  // CRL distribution points: every URI ([6] in a GeneralName) the extension holds
  const crl: string[] = []
  const walk = (value: Buffer) => {
    for (const d of children(value)) {
      if (d.tag === 0x86) crl.push(d.value.toString('latin1'))
      else if (d.tag & 0x20) walk(d.value)
    }
  }
  const dp = extensions.get('2.5.29.31')
  if (dp) walk(dp.value)
  // X509_pubkey_digest hashes the key's BIT STRING, not its SPKI
  const bits = spki ? children(spki.value)[1]!.value.subarray(1) : Buffer.alloc(0)
  return {
    version,
    signature,
    basic,
    crl,
    bits,
    critical: [...extensions].filter(([, e]) => e.critical).map(([o]) => o),
  }
}

/** OpenSSL's RFC 2253 escapes in node:crypto's names (`\,`, `\2C`) read back. */
const unescape = (s: string): string =>
  s.replace(/\\([0-9A-Fa-f]{2}|.)/g, (_, e: string) => (e.length === 2 ? String.fromCharCode(parseInt(e, 16)) : e))

/** A name's entries in order: `CN=a\nO=b` → [['CN', 'a'], ['O', 'b']]. */
const entries = (name: string): string[][] =>
  name
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const eq = line.indexOf('=')
      return [line.slice(0, eq), unescape(line.slice(eq + 1))]
    })

/** node:crypto's `DNS:a, IP Address:1.2.3.4` as lua-resty-openssl's altname types. */
function altNames(text: string | undefined): string[][] {
  if (!text) return []
  const TYPES: Record<string, string> = {
    DNS: 'DNS',
    'IP Address': 'IP',
    URI: 'URI',
    email: 'email',
    DirName: 'DirName',
  }
  return text.split(/, (?=[A-Za-z ]+:)/).map((part) => {
    const colon = part.indexOf(':')
    const type = part.slice(0, colon)
    return [TYPES[type] ?? type, part.slice(colon + 1).replace(/^"(.*)"$/, '$1')]
  })
}

/** node:crypto's date text (`Jan  1 00:00:00 2030 GMT`) as Unix seconds. */
const seconds = (date: string): number => Math.floor(Date.parse(date) / 1000)

function readCert(data: Buffer, format: string): X509Certificate | undefined {
  const text = data.toString('latin1')
  const pem = text.includes('-----BEGIN CERTIFICATE-----')
  if ((pem && format === 'DER') || (!pem && format === 'PEM')) return undefined
  try {
    return new X509Certificate(pem ? text.slice(text.indexOf('-----BEGIN CERTIFICATE-----')) : data)
  } catch {
    return undefined
  }
}

export const X509_OPS: Record<string, HostOp> = {
  /** A certificate's fields, read once: the Lua object answers its getters from them. */
  ossl_x509_new: (_s, data, format) => {
    const fmt = String(format ?? '*').toUpperCase()
    const cert = readCert(bytesOf(data), fmt)
    if (!cert) return [undefined, 'x509.new: could not read the certificate (PEM or DER expected)']
    const der = cert.raw
    let extra: ReturnType<typeof fromDer>
    try {
      extra = fromDer(der)
    } catch {
      return [undefined, 'x509.new: the certificate is not valid DER']
    }
    const [sn, nid, md] = SIGNATURES[extra.signature] ?? [extra.signature, 0, undefined]
    const access = (cert.infoAccess ?? '').split('\n')
    const ocsp = access.filter((l) => l.startsWith('OCSP - URI:')).map((l) => l.slice('OCSP - URI:'.length))
    return [
      {
        der,
        pem: cert.toString(),
        subject: entries(cert.subject),
        issuer: entries(cert.issuer),
        not_before: seconds(cert.validFrom),
        not_after: seconds(cert.validTo),
        serial: cert.serialNumber.toLowerCase(),
        version: extra.version,
        signature: { sn, nid, md },
        alt: altNames(cert.subjectAltName),
        basic: extra.basic,
        ocsp,
        crl: extra.crl,
        pubkey: cert.publicKey.export({ format: 'der', type: 'spki' }),
        pubkey_bits: extra.bits,
        critical: extra.critical,
      },
    ]
  },
  /** Whether `key` (an SPKI DER) signed the certificate. */
  ossl_x509_verify: (_s, der, key) => [
    new X509Certificate(bytesOf(der)).verify(createPublicKey({ key: bytesOf(key), format: 'der', type: 'spki' })),
  ],
  /** Whether the private key (PKCS#8 DER) is the certificate's. */
  ossl_x509_check_private_key: (_s, der, key) => [
    new X509Certificate(bytesOf(der)).checkPrivateKey(
      createPrivateKey({ key: bytesOf(key), format: 'der', type: 'pkcs8' }),
    ),
  ],
}
