import { createCipheriv, createDecipheriv, createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const V2SignType = { Md5: 'MD5', HmacSha256: 'HMAC-SHA256' } as const;
export type V2SignType = (typeof V2SignType)[keyof typeof V2SignType];

/** `sign_type` as sent: absent means MD5; undefined for a type v2 does not have. */
export function readSignType(value: string | undefined): V2SignType | undefined {
  if (value === undefined || value === '') return V2SignType.Md5;
  return Object.values(V2SignType).find((t) => t === value);
}

/** What a v2 signature covers: the non-empty fields but `sign`, sorted by name, `k=v&…`, then `&key=<API key>`. */
export function v2SignString(fields: Record<string, string | number>, apiKey: string): string {
  const pairs = Object.keys(fields)
    .filter((name) => name !== 'sign' && fields[name] !== '' && fields[name] !== undefined)
    .sort()
    .map((name) => `${name}=${fields[name]}`);
  return [...pairs, `key=${apiKey}`].join('&');
}

/** The v2 `sign`: upper-case hex MD5 of the sign string, or HMAC-SHA256 keyed with the API key. */
export function signV2(fields: Record<string, string | number>, apiKey: string, type: V2SignType): string {
  const signString = v2SignString(fields, apiKey);
  const digest =
    type === V2SignType.HmacSha256
      ? createHmac('sha256', apiKey).update(signString, 'utf8')
      : createHash('md5').update(signString, 'utf8');
  return digest.digest('hex').toUpperCase();
}

/** Whether `fields.sign` is the signature of the fields under `apiKey`, compared in constant time. */
export function v2SignatureHolds(fields: Record<string, string>, apiKey: string, type: V2SignType): boolean {
  const expected = Buffer.from(signV2(fields, apiKey, type), 'utf8');
  const actual = Buffer.from(fields.sign ?? '', 'utf8');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** The `req_info` key: the 32 ASCII bytes of the lower-case hex MD5 of the API key. */
function reqInfoKey(apiKey: string): Buffer {
  return Buffer.from(createHash('md5').update(apiKey, 'utf8').digest('hex'), 'ascii');
}

/** A refund notification's `req_info`: base64 of AES-256-ECB (PKCS#7); throws when it does not decrypt. */
export function decryptReqInfo(reqInfo: string, apiKey: string): string {
  const decipher = createDecipheriv('aes-256-ecb', reqInfoKey(apiKey), null);
  return Buffer.concat([decipher.update(Buffer.from(reqInfo, 'base64')), decipher.final()]).toString('utf8');
}

/** The platform's side of decryptReqInfo (the simulator's, the tests'). */
export function encryptReqInfo(plaintext: string, apiKey: string): string {
  const cipher = createCipheriv('aes-256-ecb', reqInfoKey(apiKey), null);
  return Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]).toString('base64');
}
