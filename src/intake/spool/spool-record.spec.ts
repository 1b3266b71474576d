import { crc32 } from 'node:zlib';
import { VerifiedNotification } from '../../domain/notification';
import {
  checkHeader,
  checksumMatches,
  decodeDelivery,
  encodeDelivery,
  frame,
  HEADER_BYTES,
  MAGIC,
} from './spool-record';

const notification: VerifiedNotification = {
  channel: 'WECHATPAY',
  merchantId: '1900009191',
  eventType: 'TRANSACTION.SUCCESS',
  paid: true,
  outTradeNo: 'O-1',
  transactionId: '4200000001',
  amount: 8888,
  currency: 'CNY',
  paidAt: new Date('2026-11-30T08:00:00.123Z'),
  rawBody: Buffer.from([0x7b, 0x00, 0xff, 0xc3, 0x28, 0x7d]), // not even UTF-8: kept byte for byte
  headers: { 'wechatpay-serial': 'PUB_KEY_ID_1', 'content-type': 'application/json' },
  replayKey: 'a3'.repeat(32),
};

describe('spool records', () => {
  it('should use the standard CRC-32', () => {
    expect(crc32('123456789')).toBe(0xcbf43926);
  });

  it('should frame a payload with the marker, its length and its checksum', () => {
    const payload = Buffer.from('{"v":1}');
    const sut = frame(payload);
    expect(sut.subarray(0, 4)).toEqual(MAGIC);
    expect(checkHeader(sut.subarray(0, HEADER_BYTES))).toEqual({ ok: true, payloadBytes: payload.length });
    expect(checksumMatches(sut.subarray(0, HEADER_BYTES), sut.subarray(HEADER_BYTES))).toBe(true);
    const flipped = Buffer.from(sut);
    flipped[HEADER_BYTES + 2] ^= 0x04;
    expect(checksumMatches(flipped.subarray(0, HEADER_BYTES), flipped.subarray(HEADER_BYTES))).toBe(false);
  });

  it('should refuse a header without the marker or with an implausible length', () => {
    const header = frame(Buffer.from('x')).subarray(0, HEADER_BYTES);
    expect(checkHeader(Buffer.concat([Buffer.from('ABCD'), header.subarray(4)])).ok).toBe(false);
    const huge = Buffer.from(header);
    huge.writeUInt32BE(64 * 1024 * 1024, 4);
    expect(checkHeader(huge).ok).toBe(false);
  });

  it('should give back the notification exactly as it was verified', () => {
    const receivedAt = new Date('2026-11-30T08:00:01.456Z');
    const sut = decodeDelivery(encodeDelivery({ notification, receivedAt, attempts: 0 }));
    expect(sut).toEqual({ notification, receivedAt, attempts: 0, retryAt: undefined });
    expect(sut.notification.rawBody.equals(notification.rawBody)).toBe(true);
  });

  it("should keep a service provider's payment's sub-merchant, and refuse one that is not a string", () => {
    const partner = { ...notification, subMerchantId: '1900000109' };
    const encoded = (subMerchantId: unknown) =>
      Buffer.from(
        encodeDelivery({ notification: partner, receivedAt: new Date(), attempts: 0 })
          .toString('utf8')
          .replace('"subMerchantId":"1900000109"', `"subMerchantId":${JSON.stringify(subMerchantId)}`),
      );

    expect(decodeDelivery(encoded('1900000109')).notification).toEqual(partner);
    expect(() => decodeDelivery(encoded(1900000109))).toThrow('not a notification');
  });

  it('should never contain the marker inside a payload', () => {
    const payload = encodeDelivery({ notification, receivedAt: new Date(), attempts: 3, retryAt: new Date() });
    expect(payload.indexOf(MAGIC)).toBe(-1);
  });

  it('should refuse a payload it did not write', () => {
    expect(() => decodeDelivery(Buffer.from('{"v":2}'))).toThrow('unknown record version');
    expect(() => decodeDelivery(Buffer.from('{"v":1,"notification":{"channel":"PAYPAL"}}'))).toThrow();
    expect(() => decodeDelivery(Buffer.from('not json'))).toThrow();
  });

  it('should refuse a replay key that is not 32 bytes of hex', () => {
    const encoded = (replayKey: string) =>
      encodeDelivery({ notification: { ...notification, replayKey }, receivedAt: new Date(), attempts: 0 });

    expect(() => decodeDelivery(encoded('a3'.repeat(31)))).toThrow('not a notification');
    expect(() => decodeDelivery(encoded('zz'.repeat(32)))).toThrow('not a notification');
  });
});
