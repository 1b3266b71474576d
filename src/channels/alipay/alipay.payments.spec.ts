import { generateKeyPairSync, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CreatePaymentRequest } from '../../domain/channel-api';
import { AlipayClient } from './alipay.client';
import { alipayPaymentRefusal, createAlipayPayment } from './alipay.payments';
import { AlipayVerifier } from './alipay.verifier';

const APP_ID = '2021004100000001';
const NOW = new Date('2026-11-29T02:00:00.000Z');

function request(overrides: Partial<CreatePaymentRequest> = {}): CreatePaymentRequest {
  return {
    orderNo: 'ORD20261129000123',
    merchantId: APP_ID,
    amount: 1999,
    currency: 'CNY',
    description: 'A coffee',
    method: 'APP',
    notifyBaseUrl: 'https://pay.example.com/notify',
    expiresAt: new Date('2026-11-29T02:30:00.500Z'),
    payer: {},
    ...overrides,
  };
}

describe(alipayPaymentRefusal.name, () => {
  const sut = alipayPaymentRefusal;

  it.each<[string, Partial<CreatePaymentRequest>, RegExp]>([
    ['a currency but CNY', { currency: 'USD' }, /CNY only, not USD/],
    ['a mini-program payment whose buyer is no id', { method: 'MINI_PROGRAM', payer: { buyerId: 'a b' } }, /buyerId/],
    [
      'a mini-program app that is no app_id',
      { method: 'MINI_PROGRAM', payer: { buyerId: '2088102146225135' }, appId: 'wx1' },
      /app_id/,
    ],
    [
      'another app for a method that pays in the account',
      { method: 'QR', appId: '2021000000000009' },
      /only MINI_PROGRAM/,
    ],
  ])('should refuse %s', (_what, overrides, message) => {
    expect(sut(request(overrides))).toMatch(message);
  });

  it.each<[string, Partial<CreatePaymentRequest>]>([
    ['an app payment', {}],
    ['a mini-program payment by user id', { method: 'MINI_PROGRAM', payer: { buyerId: '2088102146225135' } }],
    [
      'a mini-program payment by open id, in another app',
      { method: 'MINI_PROGRAM', payer: { buyerId: '074a1CcTG1Lelx' }, appId: '2021000000000009' },
    ],
    ['the account named as the app', { method: 'PAGE', appId: APP_ID }],
  ])('should take %s', (_what, overrides) => {
    expect(sut(request(overrides))).toBeUndefined();
  });
});

describe(createAlipayPayment.name, () => {
  let dir: string;
  let client: AlipayClient;
  let appPublicKey: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'alipay-payments-'));
    const alipay = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const app = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const publicKeyPath = path.join(dir, 'alipay-public-key.pem');
    const appPrivateKeyPath = path.join(dir, 'app-private-key.pem');
    writeFileSync(publicKeyPath, alipay.publicKey.export({ type: 'spki', format: 'pem' }));
    writeFileSync(appPrivateKeyPath, app.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    appPublicKey = app.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const accounts = [{ appId: APP_ID, publicKeyPath, appPrivateKeyPath }];
    client = new AlipayClient(
      accounts,
      { gatewayUrl: 'https://openapi.alipay.com/gateway.do', timeoutMs: 1000, downloadTimeoutMs: 1000 },
      new AlipayVerifier(accounts),
    );
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('should sign the orderStr over its sorted parameters with the app key, time_expire to the second, never later', async () => {
    const result = await createAlipayPayment(client, request(), 'alipay', NOW);

    expect(result.outcome).toBe('CREATED');
    if (result.outcome !== 'CREATED') return;
    const fields = Object.fromEntries(new URLSearchParams(result.buyer.params.orderStr));
    const content = Object.keys(fields)
      .filter((key) => key !== 'sign')
      .sort()
      .map((key) => `${key}=${fields[key]}`)
      .join('&');
    expect(verify('sha256', Buffer.from(content), appPublicKey, Buffer.from(fields.sign, 'base64'))).toBe(true);
    expect(fields.notify_url).toBe('https://pay.example.com/notify/alipay');
    expect(JSON.parse(fields.biz_content)).toMatchObject({ total_amount: '19.99', time_expire: '2026-11-29 10:30:00' });
    // Offered again for 15 minutes, then signed afresh with the same terms.
    expect(result.validUntil).toEqual(new Date('2026-11-29T02:15:00.000Z'));
  });

  it('should offer a signed form no later than the order expires', async () => {
    const expiresAt = new Date('2026-11-29T02:05:00.000Z');

    const result = await createAlipayPayment(client, request({ method: 'PAGE', expiresAt }), 'alipay', NOW);

    expect(result).toMatchObject({
      outcome: 'CREATED',
      validUntil: expiresAt,
      buyer: { form: { action: 'https://openapi.alipay.com/gateway.do?charset=utf-8', method: 'POST' } },
    });
  });

  it('should answer RETRY, not a refusal, for an app whose key it does not have', async () => {
    const result = await createAlipayPayment(client, request({ merchantId: '2021000000000009' }), 'alipay', NOW);

    expect(result).toMatchObject({ outcome: 'RETRY', detail: expect.stringContaining('not one of our apps') });
  });
});
