import { randomBytes } from 'node:crypto';
import { DomainError } from '../domain/domain-error';
import { decodeStrictBase64, replayKeyOf } from './signature-bytes';

describe('decodeStrictBase64', () => {
  it('should decode the canonical text of any length', () => {
    for (let n = 1; n < 64; n++) {
      const bytes = randomBytes(n);
      expect(decodeStrictBase64(bytes.toString('base64'), 'sign').equals(bytes)).toBe(true);
    }
  });

  it.each([
    ['the URL-safe alphabet', (t: string) => t.replace(/\+/g, '-').replace(/\//g, '_')],
    ['stripped padding', (t: string) => t.replace(/=+$/, '')],
    ['a space inside', (t: string) => `${t.slice(0, 8)} ${t.slice(8)}`],
    ['a line break', (t: string) => `${t.slice(0, 8)}\r\n${t.slice(8)}`],
    ['stray bits in the last character', (t: string) => t.replace(/[A-Za-z0-9+/](=+)$/, 'B$1')],
  ])('should refuse %s as InvalidSignature', (_name, rewrite) => {
    const canonical = Buffer.from([0xfb, 0xff, 0xfe, 0x01, 0x02]).toString('base64'); // +/ and padding
    expect(() => decodeStrictBase64(rewrite(canonical), 'sign')).toThrow(DomainError);
  });

  it('should key a sending on its signature bytes, not on their text', () => {
    const signature = randomBytes(32);
    expect(replayKeyOf('a', signature)).toBe(replayKeyOf('a', Buffer.from(signature.toString('base64url'), 'base64')));
    expect(replayKeyOf('a', signature)).not.toBe(replayKeyOf('b', signature));
  });
});
