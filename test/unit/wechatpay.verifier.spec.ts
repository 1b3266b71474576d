import { createDecipheriv, createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { DomainError } from '../../src/domain/domain-error';
import { WechatpayConfig } from '../../src/channels/wechatpay/wechatpay.config';
import {
  generateCertificate,
  generateRsaKeyPair,
  RsaKeyPair,
  signWechatpayBody,
  wechatpayDelivery,
  WechatpayEvent,
  wechatpayRefund,
  WechatpaySigner,
  wechatpayTransaction,
} from '../../tools/simulator/platform-signers';
import { VECTORS_DIR } from '../support/vectors';
import { isPayment, RawDelivery } from '../../src/domain/notification';
import { WechatpayVerifier } from '../../src/channels/wechatpay/wechatpay.verifier';
import { WechatpayChannel } from '../../src/channels/wechatpay/wechatpay.channel';
import { WechatpayClient } from '../../src/channels/wechatpay/wechatpay.client';

/** SHA-256 over the delivery's timestamp, nonce and signature bytes: what names one signed sending. */
/** A WeChat Pay APIv3 notification's JSON, as the tests take it apart. */
type Envelope = Record<string, unknown> & {
  resource: Record<string, unknown> & { ciphertext: string; nonce: string; associated_data: string; algorithm: string };
};

function replayKeyOf({ headers }: RawDelivery): string {
  const [timestamp, nonce, signature] = ['timestamp', 'nonce', 'signature'].map((n) =>
    String(headers[`wechatpay-${n}`]),
  );
  return createHash('sha256').update(`${timestamp}\n${nonce}\n`).update(Buffer.from(signature, 'base64')).digest('hex');
}

const VECTORS = VECTORS_DIR;
const PUBLIC_KEY_ID = 'PUB_KEY_ID_0114232134912410000000000000';
const CERT_SERIAL = '5157F09EFDC096DE15EBE81A47057A7232F1B8E1';
const MCHID = '1900009191';
const APPID = 'wxd678efh567hg6787';
const API_V3_KEY = 'a7cde1ZJB1kG2e7VfTs3jQzaWizur8Gb';
const OTHER_API_V3_KEY = 'Qx7Lm2Vb9Rt4Wn6Pz8Ks1Hd3Fg5Jc0Ye';
/** 2025-03-01T12:00:00Z: every generated delivery is signed for this instant and verified against it. */
const NOW_MS = Date.UTC(2025, 2, 1, 12, 0, 0);
const NOW_S = NOW_MS / 1000;
const fixedClock = () => NOW_MS;

/** The error code a call throws, so that a wrong code or no error at all shows up in the assertion. */
function codeOf(call: () => unknown): string {
  try {
    call();
  } catch (error) {
    return error instanceof DomainError ? error.code : `non-domain error: ${String(error)}`;
  }
  return 'no error';
}

function messageOf(call: () => unknown): string {
  try {
    call();
  } catch (error) {
    return (error as Error).message;
  }
  return 'no error';
}

function asRaw({ headers, body }: { headers: Record<string, string>; body: string }): RawDelivery {
  return { headers, body: Buffer.from(body, 'utf8') };
}

describe(WechatpayVerifier.name, () => {
  let dir: string;
  let platform: RsaKeyPair;
  let rotated: RsaKeyPair;
  let stranger: RsaKeyPair;
  let publicKeyPath: string;
  let certPath: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'wechatpay-verifier-'));
    platform = generateRsaKeyPair();
    rotated = generateRsaKeyPair();
    stranger = generateRsaKeyPair();
    publicKeyPath = path.join(dir, 'platform-public-key.pem');
    writeFileSync(publicKeyPath, platform.publicKeyPem);
    certPath = path.join(dir, 'platform-cert.pem');
    writeFileSync(certPath, await generateCertificate(rotated, CERT_SERIAL));
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const config = (overrides: Partial<WechatpayConfig> = {}): WechatpayConfig => ({
    mchid: MCHID,
    appids: [APPID],
    apiV3Key: API_V3_KEY,
    publicKey: { id: PUBLIC_KEY_ID, path: publicKeyPath },
    platformCertPaths: [],
    ...overrides,
  });
  const publicKeySigner = (): WechatpaySigner => ({
    privateKey: platform.privateKey,
    serial: PUBLIC_KEY_ID,
    apiV3Key: API_V3_KEY,
  });
  const certSigner = (): WechatpaySigner => ({
    privateKey: rotated.privateKey,
    serial: CERT_SERIAL,
    apiV3Key: API_V3_KEY,
  });
  const payment = (overrides: Partial<Parameters<typeof wechatpayTransaction>[0]> = {}) =>
    wechatpayTransaction({
      mchid: MCHID,
      appid: APPID,
      outTradeNo: 'ORD20250301120000001',
      transactionId: '4200002345202503011234567890',
      total: 8888,
      successTime: new Date(NOW_MS - 3000),
      ...overrides,
    });
  const deliver = (signer: WechatpaySigner, event: Partial<WechatpayEvent> = {}) =>
    asRaw(wechatpayDelivery(signer, { resource: payment(), timestamp: NOW_S, ...event }));

  describe('platform public key mode', () => {
    let sut: WechatpayVerifier;
    beforeEach(() => {
      sut = new WechatpayVerifier([config()], fixedClock);
    });

    it('should accept a delivery signed with the platform key', () => {
      expect(codeOf(() => sut.verify(deliver(publicKeySigner())))).toBe('no error');
    });

    it('should return the normalized payment fields', () => {
      const delivery = deliver(publicKeySigner());

      const result = sut.verify(delivery);

      expect(result).toEqual({
        channel: 'WECHATPAY',
        eventType: 'TRANSACTION.SUCCESS',
        merchantId: MCHID,
        paid: true,
        outTradeNo: 'ORD20250301120000001',
        transactionId: '4200002345202503011234567890',
        amount: 8888,
        currency: 'CNY',
        paidAt: new Date(NOW_MS - 3000),
        rawBody: delivery.body,
        headers: delivery.headers,
        replayKey: replayKeyOf(delivery),
      });
      expect(Number.isInteger(result.amount)).toBe(true);
      expect(result.paidAt).toBeInstanceOf(Date);
    });

    it('should accept a timestamp exactly 5 minutes off in either direction', () => {
      expect(codeOf(() => sut.verify(deliver(publicKeySigner(), { timestamp: NOW_S - 300 })))).toBe('no error');
      expect(codeOf(() => sut.verify(deliver(publicKeySigner(), { timestamp: NOW_S + 300 })))).toBe('no error');
    });

    it('should reject a body with one byte changed', () => {
      const delivery = deliver(publicKeySigner());
      expect(codeOf(() => sut.verify(delivery))).toBe('no error');
      const body = Buffer.from(delivery.body);
      body[body.indexOf('encrypt-resource') + 'encrypt-'.length] ^= 0x01; // 'r' -> 's'

      expect(codeOf(() => sut.verify({ headers: delivery.headers, body }))).toBe('InvalidSignature');
    });

    it('should name, as the platform spells it, each signature header that is missing', () => {
      const names = ['timestamp', 'nonce', 'signature', 'serial'];
      const messages = names.map((name) => {
        const delivery = deliver(publicKeySigner());
        delete delivery.headers[`wechatpay-${name}`];
        return { code: codeOf(() => sut.verify(delivery)), message: messageOf(() => sut.verify(delivery)) };
      });

      expect(messages).toEqual(
        ['Timestamp', 'Nonce', 'Signature', 'Serial'].map((name) => ({
          code: 'MalformedRequest',
          message: `missing header Wechatpay-${name}`,
        })),
      );
    });

    it('should reject a serial that names no configured key', () => {
      const signer = { ...publicKeySigner(), serial: 'PUB_KEY_ID_0114232134912410000000000001' };

      expect(codeOf(() => sut.verify(deliver(signer)))).toBe('UnknownSigningKey');
    });

    it('should reject a timestamp more than 5 minutes in the past', () => {
      expect(codeOf(() => sut.verify(deliver(publicKeySigner(), { timestamp: NOW_S - 301 })))).toBe('TimestampExpired');
    });

    it('should reject a timestamp more than 5 minutes in the future', () => {
      expect(codeOf(() => sut.verify(deliver(publicKeySigner(), { timestamp: NOW_S + 301 })))).toBe('TimestampExpired');
    });

    it('should reject a delivery signed by another private key under the right serial', () => {
      const signer = { ...publicKeySigner(), privateKey: stranger.privateKey };

      expect(codeOf(() => sut.verify(deliver(signer)))).toBe('InvalidSignature');
    });

    it('should name the platform key it tried when the signature does not verify', () => {
      const signer = { ...publicKeySigner(), privateKey: stranger.privateKey };

      expect(messageOf(() => sut.verify(deliver(signer)))).toBe(
        `Wechatpay-Signature does not verify with platform key ${PUBLIC_KEY_ID} (of mchid ${MCHID})`,
      );
    });

    it('should reject the WECHATPAY/SIGNTEST/ signature probe', () => {
      const delivery = deliver(publicKeySigner());
      delivery.headers['wechatpay-signature'] = `WECHATPAY/SIGNTEST/${String(delivery.headers['wechatpay-signature'])}`;

      expect(codeOf(() => sut.verify(delivery))).toBe('InvalidSignature');
    });

    it.each(['wechatpay-timestamp', 'wechatpay-nonce', 'wechatpay-signature', 'wechatpay-serial'])(
      'should reject a delivery without the %s header',
      (header) => {
        const delivery = deliver(publicKeySigner());
        delete delivery.headers[header];

        expect(codeOf(() => sut.verify(delivery))).toBe('MalformedRequest');
      },
    );

    it('should reject a transaction for another mchid', () => {
      const delivery = deliver(publicKeySigner(), { resource: payment({ mchid: '1900009192' }) });

      expect(codeOf(() => sut.verify(delivery))).toBe('MerchantMismatch');
    });

    it('should reject a transaction for another appid', () => {
      const delivery = deliver(publicKeySigner(), { resource: payment({ appid: 'wx0000000000000000' }) });

      expect(codeOf(() => sut.verify(delivery))).toBe('MerchantMismatch');
    });

    it('should reject a resource encrypted with another APIv3 key', () => {
      const signer = { ...publicKeySigner(), apiV3Key: OTHER_API_V3_KEY };

      expect(codeOf(() => sut.verify(deliver(signer)))).toBe('Undecryptable');
    });

    it('should reject a validly signed delivery whose ciphertext was tampered with', () => {
      const envelope = JSON.parse(
        wechatpayDelivery(publicKeySigner(), { resource: payment(), timestamp: NOW_S }).body,
      ) as Envelope;
      const sealed = Buffer.from(envelope.resource.ciphertext, 'base64');
      sealed[5] ^= 0x01;
      envelope.resource.ciphertext = sealed.toString('base64');
      const body = JSON.stringify(envelope);
      const headers = signWechatpayBody(publicKeySigner(), body, { timestamp: NOW_S });

      expect(codeOf(() => sut.verifySignature(asRaw({ headers, body })))).toBe('no error');
      expect(codeOf(() => sut.verify(asRaw({ headers, body })))).toBe('Undecryptable');
    });

    it('should reject a resource that declares an algorithm other than AEAD_AES_256_GCM', () => {
      const envelope = JSON.parse(
        wechatpayDelivery(publicKeySigner(), { resource: payment(), timestamp: NOW_S }).body,
      ) as Envelope;
      envelope.resource.algorithm = 'AEAD_AES_128_GCM';
      const body = JSON.stringify(envelope);
      const headers = signWechatpayBody(publicKeySigner(), body, { timestamp: NOW_S });

      expect(codeOf(() => sut.verify(asRaw({ headers, body })))).toBe('Undecryptable');
    });

    it('should report an event other than TRANSACTION.SUCCESS as not paid', () => {
      const refund = {
        mchid: MCHID,
        out_trade_no: 'ORD20250301120000001',
        transaction_id: '4200002345202503011234567890',
        out_refund_no: 'RF20250301120000001',
        refund_id: '50000000382019052709732678859',
        refund_status: 'SUCCESS',
        success_time: '2025-03-01T20:00:00+08:00',
        user_received_account: '招商银行信用卡0403',
        amount: { total: 8888, refund: 8888, payer_total: 8888, payer_refund: 8888 },
      };
      const delivery = deliver(publicKeySigner(), {
        eventType: 'REFUND.SUCCESS',
        resource: refund,
        originalType: 'refund',
      });

      const result = sut.verify(delivery);

      expect(result).toMatchObject({
        eventType: 'REFUND.SUCCESS',
        paid: false,
        merchantId: MCHID,
        outTradeNo: 'ORD20250301120000001',
        transactionId: '4200002345202503011234567890',
      });
      expect(result.amount).toBeUndefined();
    });

    it('should report a TRANSACTION.SUCCESS whose trade_state is not SUCCESS as not paid', () => {
      const delivery = deliver(publicKeySigner(), { resource: payment({ tradeState: 'NOTPAY' }) });

      expect(sut.verify(delivery).paid).toBe(false);
    });
  });

  describe('several merchant accounts', () => {
    const MCHID_B = '1900009192';
    const APPID_MINI = 'wx2421b1c4370ec43b';
    const PUBLIC_KEY_ID_B = 'PUB_KEY_ID_0114232134912410000000000002';
    let keyB: RsaKeyPair;
    let sut: WechatpayVerifier;

    beforeAll(() => {
      keyB = generateRsaKeyPair();
      writeFileSync(path.join(dir, 'platform-b.pem'), keyB.publicKeyPem);
    });
    beforeEach(() => {
      sut = new WechatpayVerifier(
        [
          config({ appids: [APPID, APPID_MINI] }),
          config({
            mchid: MCHID_B,
            appids: [],
            apiV3Key: OTHER_API_V3_KEY,
            publicKey: { id: PUBLIC_KEY_ID_B, path: path.join(dir, 'platform-b.pem') },
          }),
        ],
        fixedClock,
      );
    });
    const signerB = (): WechatpaySigner => ({
      privateKey: keyB.privateKey,
      serial: PUBLIC_KEY_ID_B,
      apiV3Key: OTHER_API_V3_KEY,
    });

    it('should route each delivery to the account whose key signed it', () => {
      const a = sut.verify(deliver(publicKeySigner()));
      const b = sut.verify(deliver(signerB(), { resource: payment({ mchid: MCHID_B, appid: 'wxanyappofmerchantb' }) }));

      expect([a.merchantId, b.merchantId]).toEqual([MCHID, MCHID_B]);
    });

    it('should accept every app id of the account, and refuse another', () => {
      expect(sut.verify(deliver(publicKeySigner(), { resource: payment({ appid: APPID_MINI }) })).paid).toBe(true);
      expect(
        codeOf(() => sut.verify(deliver(publicKeySigner(), { resource: payment({ appid: 'wx0000000000000000' }) }))),
      ).toBe('MerchantMismatch');
    });

    it("should refuse a delivery signed with account B's key that claims account A's mchid", () => {
      const forged = deliver(signerB(), { resource: payment({ mchid: MCHID }) });

      expect(codeOf(() => sut.verify(forged))).toBe('MerchantMismatch');
    });

    it("should not decrypt with another account's APIv3 key", () => {
      const sealedForA = deliver({ ...signerB(), apiV3Key: API_V3_KEY }, { resource: payment({ mchid: MCHID_B }) });

      expect(codeOf(() => sut.verify(sealedForA))).toBe('Undecryptable');
    });
  });

  describe('refund notifications', () => {
    const OUT_TRADE_NO = 'ORD20250301120000001';
    const TRANSACTION_ID = '4200002345202503011234567890';
    const OUT_REFUND_NO = 'ER9D7E9CAD981A646C1A0B46E1F8D8EFC0';
    const REFUND_ID = '50000000382019052709732678859';
    let sut: WechatpayVerifier;
    beforeEach(() => {
      sut = new WechatpayVerifier([config()], fixedClock);
    });

    const refundResource = (overrides: Partial<Parameters<typeof wechatpayRefund>[0]> = {}) =>
      wechatpayRefund({
        mchid: MCHID,
        outTradeNo: OUT_TRADE_NO,
        transactionId: TRANSACTION_ID,
        outRefundNo: OUT_REFUND_NO,
        refundId: REFUND_ID,
        total: 8888,
        refund: 8888,
        ...overrides,
      });
    const deliverRefund = (eventType: string, resource: object) =>
      deliver(publicKeySigner(), { eventType, resource, originalType: 'refund' });

    it.each([
      ['REFUND.SUCCESS', 'SUCCESS', 'SUCCEEDED'],
      ['REFUND.ABNORMAL', 'ABNORMAL', 'ABNORMAL'],
      ['REFUND.CLOSED', 'CLOSED', 'CLOSED'],
    ])('should read %s with refund_status %s as a refund %s that pays nothing', (eventType, refundStatus, status) => {
      const delivery = deliverRefund(eventType, refundResource({ refundStatus }));

      const result = sut.verify(delivery);

      expect(result).toEqual({
        channel: 'WECHATPAY',
        eventType,
        merchantId: MCHID,
        paid: false,
        outTradeNo: OUT_TRADE_NO,
        transactionId: TRANSACTION_ID,
        refund: { refundNo: OUT_REFUND_NO, channelRefundId: REFUND_ID, status },
        rawBody: delivery.body,
        headers: delivery.headers,
        replayKey: replayKeyOf(delivery),
      });
      expect(isPayment(result)).toBe(false);
    });

    it('should take the status from the decrypted refund_status, not from the event type', () => {
      const result = sut.verify(deliverRefund('REFUND.SUCCESS', refundResource({ refundStatus: 'ABNORMAL' })));

      expect(result.refund?.status).toBe('ABNORMAL');
    });

    it('should read a partial refund the same way, without an amount', () => {
      const result = sut.verify(deliverRefund('REFUND.SUCCESS', refundResource({ refund: 100 })));

      expect(result.refund).toEqual({ refundNo: OUT_REFUND_NO, channelRefundId: REFUND_ID, status: 'SUCCEEDED' });
      expect(result.amount).toBeUndefined();
      expect(result.paidAt).toBeUndefined();
    });

    it('should reject a refund for another mchid', () => {
      const delivery = deliverRefund('REFUND.SUCCESS', refundResource({ mchid: '1900009192' }));

      expect(codeOf(() => sut.verify(delivery))).toBe('MerchantMismatch');
    });

    // Signed by the platform, so not refused: kept, recorded as MALFORMED_NOTIFICATION and acked, settling nothing.
    const readAsMalformed = (resource: object, naming: string) => {
      const result = sut.verify(deliverRefund('REFUND.SUCCESS', resource));
      expect(result).toMatchObject({ paid: false, malformed: expect.stringContaining(naming) });
      expect(result.refund).toBeUndefined();
    };

    it.each(['PROCESSING', 'success', 'REFUNDED', ''])(
      'should read refund_status "%s" as malformed',
      (refundStatus) => {
        readAsMalformed({ ...refundResource(), refund_status: refundStatus }, 'refund_status');
      },
    );

    it.each(['out_refund_no', 'refund_id', 'refund_status', 'mchid', 'out_trade_no', 'transaction_id'])(
      'should read a refund resource without %s as malformed',
      (field) => {
        const resource: Record<string, unknown> = { ...refundResource() };
        delete resource[field];

        readAsMalformed(resource, field);
      },
    );

    it('should read an out_refund_no longer than 64 characters as malformed', () => {
      readAsMalformed(refundResource({ outRefundNo: 'R'.repeat(65) }), 'out_refund_no');
    });

    it('should reject a refund notification whose body was changed after signing', () => {
      const delivery = deliverRefund('REFUND.CLOSED', refundResource({ refundStatus: 'CLOSED' }));
      expect(codeOf(() => sut.verify(delivery))).toBe('no error');
      const body = Buffer.from(delivery.body.toString('utf8').replace('"REFUND.CLOSED"', '"REFUND.CLOSEE"'), 'utf8');
      expect(body.equals(delivery.body)).toBe(false);

      expect(codeOf(() => sut.verify({ headers: delivery.headers, body }))).toBe('InvalidSignature');
    });

    it('should reject a refund resource encrypted with another APIv3 key', () => {
      const signer = { ...publicKeySigner(), apiV3Key: OTHER_API_V3_KEY };
      const delivery = deliver(signer, {
        eventType: 'REFUND.SUCCESS',
        resource: refundResource(),
        originalType: 'refund',
      });

      expect(codeOf(() => sut.verify(delivery))).toBe('Undecryptable');
    });
  });

  describe('platform certificate mode', () => {
    let sut: WechatpayVerifier;
    beforeEach(() => {
      sut = new WechatpayVerifier([config({ publicKey: undefined, platformCertPaths: [certPath] })], fixedClock);
    });

    it('should accept a delivery signed with the certificate key under its serial', () => {
      const result = sut.verify(deliver(certSigner()));

      expect(result).toMatchObject({ paid: true, amount: 8888, merchantId: MCHID });
    });

    it('should reject the public key id when only certificates are configured', () => {
      expect(codeOf(() => sut.verify(deliver(publicKeySigner())))).toBe('UnknownSigningKey');
    });

    it('should reject a delivery signed by another key under the certificate serial', () => {
      const signer = { ...certSigner(), privateKey: stranger.privateKey };

      expect(codeOf(() => sut.verify(deliver(signer)))).toBe('InvalidSignature');
    });
  });

  describe('key rotation (public key and certificate at once)', () => {
    let sut: WechatpayVerifier;
    beforeEach(() => {
      sut = new WechatpayVerifier([config({ platformCertPaths: [certPath] })], fixedClock);
    });

    it('should accept deliveries signed by either key under its own serial', () => {
      expect(codeOf(() => sut.verify(deliver(publicKeySigner())))).toBe('no error');
      expect(codeOf(() => sut.verify(deliver(certSigner())))).toBe('no error');
    });

    it('should reject a key presented under the other key serial', () => {
      const swappedA = { ...publicKeySigner(), serial: CERT_SERIAL };
      const swappedB = { ...certSigner(), serial: PUBLIC_KEY_ID };

      expect(codeOf(() => sut.verify(deliver(swappedA)))).toBe('InvalidSignature');
      expect(codeOf(() => sut.verify(deliver(swappedB)))).toBe('InvalidSignature');
    });
  });

  describe('real vector from wechatpay-go', () => {
    const vector = JSON.parse(readFileSync(path.join(VECTORS, 'wechatpay-go-notify.json'), 'utf8')) as {
      headers: Record<string, string>;
      body: string;
      verify_at_unix: number;
    };
    const vectorCertPath = path.join(VECTORS, 'wechatpay-go-cert.pem');
    // Node's HTTP server hands headers over lower-cased; the vector records them as sent.
    const headers = () => Object.fromEntries(Object.entries(vector.headers).map(([k, v]) => [k.toLowerCase(), v]));
    const delivery = (): RawDelivery => ({ headers: headers(), body: Buffer.from(vector.body, 'utf8') });
    const vectorConfig = (apiV3Key = API_V3_KEY) =>
      config({
        mchid: '1234567890',
        appids: [],
        apiV3Key,
        publicKey: undefined,
        platformCertPaths: [vectorCertPath],
      });
    const atSigningTime = () => vector.verify_at_unix * 1000;

    it('should verify the signature as it is when the clock reads verify_at_unix', () => {
      const sut = new WechatpayVerifier([vectorConfig()], atSigningTime);

      expect(codeOf(() => sut.verifySignature(delivery()))).toBe('no error');
    });

    it('should hold an AES-128-GCM resource, as its README says', () => {
      const resource = (JSON.parse(vector.body) as Envelope).resource;
      const sealed = Buffer.from(resource.ciphertext, 'base64');
      const decipher = createDecipheriv(
        'aes-128-gcm',
        Buffer.from('testMchAPIv3Key0', 'utf8'),
        Buffer.from(resource.nonce, 'utf8'),
      );
      decipher.setAuthTag(sealed.subarray(sealed.length - 16));
      decipher.setAAD(Buffer.from(resource.associated_data, 'utf8'));
      const plaintext = Buffer.concat([
        decipher.update(sealed.subarray(0, sealed.length - 16)),
        decipher.final(),
      ]).toString('utf8');

      expect(JSON.parse(plaintext)).toMatchObject({ mchid: '1234567890' });
    });

    it('should refuse to decrypt the AES-128 resource with its AES-256 decryptor', () => {
      const sut = new WechatpayVerifier([vectorConfig()], atSigningTime);

      expect(codeOf(() => sut.verify(delivery()))).toBe('Undecryptable');
    });

    it('should refuse to decrypt the AES-128 resource even when given its 16-byte key', () => {
      const sut = new WechatpayVerifier([vectorConfig('testMchAPIv3Key0')], atSigningTime);

      expect(codeOf(() => sut.verify(delivery()))).toBe('Undecryptable');
    });

    it.each([
      ['the event type', '"event_type":"PAYSCORE.USER_OPEN_SERVICE"', '"event_type":"PAYSCORE.USER_OPEN_SERVICF"'],
      ['the id', '"id":"3119dfba', '"id":"3119dfbb'],
      ['the ciphertext', '"ciphertext":"YDS3', '"ciphertext":"YDS4'],
      ['the nonce', '"nonce":"Kj7QIyUiYx1q"', '"nonce":"Kj7QIyUiYx1r"'],
    ])('should reject the vector with one byte of %s changed', (_what, from, to) => {
      const sut = new WechatpayVerifier([vectorConfig()], atSigningTime);
      const body = Buffer.from(vector.body.replace(from, to), 'utf8');
      const original = Buffer.from(vector.body, 'utf8');
      expect(body.length).toBe(original.length);
      expect(body.filter((byte, i) => byte !== original[i]).length).toBe(1);

      expect(codeOf(() => sut.verify({ headers: headers(), body }))).toBe('InvalidSignature');
    });

    it('should reject the vector as expired under the real clock', () => {
      const sut = new WechatpayVerifier([vectorConfig()]);

      expect(codeOf(() => sut.verify(delivery()))).toBe('TimestampExpired');
    });
  });
  describe('a kept delivery decrypted again for an admin (decryptKeptResource)', () => {
    it('should open the resource of a delivery signed long ago, without checking the time again', () => {
      const sut = new WechatpayVerifier([config()], fixedClock);
      const old = deliver(publicKeySigner(), { timestamp: NOW_S - 86_400 });
      expect(codeOf(() => sut.verify(old))).toBe('TimestampExpired');

      expect(sut.decryptKeptResource(old)).toMatchObject({
        out_trade_no: 'ORD20250301120000001',
        transaction_id: '4200002345202503011234567890',
        payer: { openid: expect.any(String) },
      });
    });

    it("should try each account's APIv3 key when the delivery's serial is no longer configured", () => {
      const sut = new WechatpayVerifier(
        [
          config({ mchid: '1900000002', apiV3Key: OTHER_API_V3_KEY, publicKey: { id: 'OTHER', path: publicKeyPath } }),
          config(),
        ],
        fixedClock,
      );
      const delivery = deliver(publicKeySigner());
      const rotatedOut = { ...delivery, headers: { ...delivery.headers, 'wechatpay-serial': 'NO_LONGER_CONFIGURED' } };

      expect(sut.decryptKeptResource(rotatedOut)).toMatchObject({ out_trade_no: 'ORD20250301120000001' });
    });

    it('should refuse a resource no configured key opens, saying nothing of its content', () => {
      const sut = new WechatpayVerifier(
        [config({ apiV3Key: OTHER_API_V3_KEY, publicKey: { id: 'OTHER', path: publicKeyPath } })],
        fixedClock,
      );
      const delivery = deliver(publicKeySigner());

      expect(codeOf(() => sut.decryptKeptResource(delivery))).toBe('Undecryptable');
      expect(messageOf(() => sut.decryptKeptResource(delivery))).toBe(
        'the resource does not decrypt with any configured APIv3 key',
      );
    });
  });
  describe(`${WechatpayChannel.name}.decryptedContent`, () => {
    const channel = () =>
      new WechatpayChannel([], new WechatpayVerifier([config()], fixedClock), {} as WechatpayClient);

    it("should mask the payer's openid and the account a refund reached for a viewer, at any depth", () => {
      const refund = asRaw(
        wechatpayDelivery(publicKeySigner(), {
          eventType: 'REFUND.SUCCESS',
          originalType: 'refund',
          timestamp: NOW_S,
          resource: wechatpayRefund({
            mchid: MCHID,
            outTradeNo: 'ORD20250301120000001',
            transactionId: '4200002345202503011234567890',
            outRefundNo: 'R1',
            refundId: '50000000382019052709732678859',
            total: 8888,
            refund: 8888,
          }),
        }),
      );
      const sut = channel();

      expect(sut.decryptedContent(refund, { masked: false })).toMatchObject({
        user_received_account: '招商银行信用卡0403',
      });
      expect(sut.decryptedContent(refund, { masked: true })).toMatchObject({
        user_received_account: '招商*******03',
        out_refund_no: 'R1',
        amount: { refund: 8888 },
      });
      const paid = sut.decryptedContent(deliver(publicKeySigner()), { masked: true }) as { payer: { openid: string } };
      expect(paid.payer.openid).toMatch(/^.{2}\*+.{2}$/);
    });

    it('should find nothing encrypted in an APIv2 XML notification', () => {
      const xml = { headers: {}, body: Buffer.from('<xml><openid>o1</openid></xml>') };

      expect(channel().hasEncryptedContent(xml.body)).toBe(false);
      expect(channel().decryptedContent(xml, { masked: true })).toBeUndefined();
    });
  });
});
