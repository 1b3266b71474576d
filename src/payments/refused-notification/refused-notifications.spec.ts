import { keptHeaders, MAX_KEPT_HEADER_BYTES } from './refused-notifications';

/** A WeChat Pay delivery's signature headers, as they arrive (RSA-2048: a 344-character signature). */
const SIGNATURE_HEADERS = {
  'Wechatpay-Serial': '5157F09EFDC096DE15EBE81A47057A7232F1B8E1',
  'Wechatpay-Signature': 'A'.repeat(344),
  'Wechatpay-Timestamp': '1764400000',
  'Wechatpay-Nonce': 'fdasflkja484w',
  'Content-Type': 'application/json',
};

const storedBytes = (headers: Record<string, string>) => Buffer.byteLength(JSON.stringify(headers));

describe(keptHeaders.name, () => {
  const sut = keptHeaders;

  it('should keep the signature headers as they are, lower-cased, and no credentials', () => {
    const kept = sut({
      ...SIGNATURE_HEADERS,
      Authorization: 'Bearer secret',
      Cookie: 'a=b',
      'X-Forwarded-For': '10.0.0.1',
    });

    expect(kept).toEqual({
      'wechatpay-serial': SIGNATURE_HEADERS['Wechatpay-Serial'],
      'wechatpay-signature': SIGNATURE_HEADERS['Wechatpay-Signature'],
      'wechatpay-timestamp': SIGNATURE_HEADERS['Wechatpay-Timestamp'],
      'wechatpay-nonce': SIGNATURE_HEADERS['Wechatpay-Nonce'],
      'content-type': 'application/json',
    });
  });

  it('should store at most MAX_KEPT_HEADER_BYTES of JSON, however many large headers come, and still the signature', () => {
    // Values whose every character JSON escapes (a quote: two bytes), under names as long as a request allows.
    const padding = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`x-padding-${i}-${'n'.repeat(200)}`, '"'.repeat(4096)]),
    );

    const kept = sut({ ...padding, ...SIGNATURE_HEADERS });

    expect(storedBytes(kept)).toBeLessThanOrEqual(MAX_KEPT_HEADER_BYTES);
    expect(kept).toMatchObject({
      'wechatpay-signature': SIGNATURE_HEADERS['Wechatpay-Signature'],
      'wechatpay-serial': SIGNATURE_HEADERS['Wechatpay-Serial'],
      'wechatpay-timestamp': SIGNATURE_HEADERS['Wechatpay-Timestamp'],
      'wechatpay-nonce': SIGNATURE_HEADERS['Wechatpay-Nonce'],
    });
  });

  it('should count the bytes as stored: characters above ASCII take two or more', () => {
    const wide = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x-wide-${i}`, 'é'.repeat(1024)]));

    expect(storedBytes(sut(wide))).toBeLessThanOrEqual(MAX_KEPT_HEADER_BYTES);
    expect(Object.keys(sut(wide)).length).toBeGreaterThan(0);
  });
});
