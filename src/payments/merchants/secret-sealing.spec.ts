import { randomBytes } from 'node:crypto';
import { parseKeyRing, seal, secretBinding, unseal, UnsealError } from './secret-sealing';

const line = (id: string, key: Buffer = randomBytes(32)) => `${id}:${key.toString('base64')}`;

describe('sealing the directory secrets', () => {
  const ring = parseKeyRing([line('k2'), line('k1')].join('\n'), 'keys');
  const binding = secretBinding('WECHATPAY', '1900009191');
  const secret = Buffer.from('{"entry":{"apiV3Key":"0123456789abcdef0123456789abcdef"}}');

  it('should seal under the first key with a fresh IV, and open with the same binding', () => {
    const a = seal(ring, secret, binding);
    const b = seal(ring, secret, binding);
    expect(a.keyId).toBe('k2');
    expect(a.iv).toHaveLength(12);
    expect(a.iv.equals(b.iv)).toBe(false);
    expect(a.ciphertext.includes(Buffer.from('0123456789abcdef'))).toBe(false);
    expect(unseal(ring, a, binding).equals(secret)).toBe(true);
  });

  it('should open a secret sealed under a key of a later line', () => {
    const older = parseKeyRing(line('k1', ring.byId.get('k1')), 'keys');
    const sealed = seal(older, secret, binding);
    expect(sealed.keyId).toBe('k1');
    expect(unseal(ring, sealed, binding).equals(secret)).toBe(true);
  });

  it.each([
    ['a changed ciphertext byte', (s: ReturnType<typeof seal>) => ({ ...s, ciphertext: flip(s.ciphertext) })],
    ['a changed tag', (s: ReturnType<typeof seal>) => ({ ...s, tag: flip(s.tag) })],
    ['a changed IV', (s: ReturnType<typeof seal>) => ({ ...s, iv: flip(s.iv) })],
  ])('should refuse %s', (_, tamper) => {
    const sealed = tamper(seal(ring, secret, binding));
    expect(() => unseal(ring, sealed, binding)).toThrow(UnsealError);
  });

  it('should refuse a secret moved to another account (the binding is the AAD)', () => {
    const sealed = seal(ring, secret, binding);
    expect(() => unseal(ring, sealed, secretBinding('WECHATPAY', '1900009192'))).toThrow(/not authentic under key k2/);
    expect(() => unseal(ring, sealed, secretBinding('ALIPAY', '1900009191'))).toThrow(UnsealError);
  });

  it('should refuse a key id the file no longer holds, naming the id only', () => {
    const sealed = seal(ring, secret, binding);
    const without = parseKeyRing(line('k3'), 'keys');
    expect(() => unseal(without, sealed, binding)).toThrow('key k2 is not in MERCHANT_SECRETS_KEYS_FILE');
  });

  it.each([
    ['no colon', 'k1', /line 1 must be keyId:base64/],
    ['a short key', `k1:${randomBytes(16).toString('base64')}`, /line 1: the key of k1 must be 32 bytes/],
    ['the same id twice', `${line('k1')}\n${line('k1')}`, /line 2: key id k1 appears twice/],
    ['no key at all', '# only a comment\n', /holds no key/],
  ])('should refuse a keys file with %s, never quoting a key', (_, text, message) => {
    expect(() => parseKeyRing(text, 'keys')).toThrow(message);
  });
});

function flip(bytes: Buffer): Buffer {
  const copy = Buffer.from(bytes);
  copy[0] ^= 1;
  return copy;
}
