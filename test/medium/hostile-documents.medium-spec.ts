import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'mysql2/promise';
import { encryptReqInfo } from '../../src/channels/wechatpay/v2/wechatpay-v2.sign';
import { writeV2Xml } from '../../src/channels/wechatpay/v2/wechatpay-v2.xml';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { TradeModule } from '../../src/trade/trade.module';
import {
  alipayDelivery,
  encryptWechatpayResource,
  generateRsaKeyPair,
  randomAlphanumeric,
  signWechatpayBody,
} from '../../tools/simulator/platform-signers';
import {
  generateUnionpayKeySet,
  UnionpayKeySet,
  writeUnionpayKeySet,
} from '../../tools/simulator/unionpay/unionpay-keys';
import { signUnionpay, unionpayForm } from '../../tools/simulator/unionpay/unionpay-signer';
import { hostileFormBodies, hostileJsonTexts, hostileXmlDocuments, seededRandom } from '../support/hostile-documents';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { exposition, IntakeReply, receive } from '../support/medium-intake';
import { count, TestPlatforms } from '../support/test-app';

/**
 * Generated hostile documents for every notify endpoint, before and after the
 * signature (decrypted contents too), handed to the notify use case (NotificationIntake) as the
 * route hands them over: each a 4xx reply with a message, nothing written and no InternalError
 * counted.
 */
const TABLES = ['payment_order', 'payment_callback', 'callback_delivery', 'payment_anomaly', 'outbox_event'] as const;
const PAYMENT_TABLES = ['payment_order', 'payment_callback', 'outbox_event'] as const;
const MER_ID = '777290058167151';
const API_V2_KEY = randomAlphanumeric(32);
const FORM = 'application/x-www-form-urlencoded; charset=utf-8';

let setup: Medium;
let platforms: TestPlatforms;
let unionpayKeys: UnionpayKeySet;
let ctx: MediumContext;
let pool: Pool;

beforeAll(async () => {
  unionpayKeys = generateUnionpayKeySet();
  const unionpayEnv = writeUnionpayKeySet(unionpayKeys, mkdtempSync(join(tmpdir(), 'pcs-hostile-')), MER_ID);
  setup = await startMedium(
    {
      ...unionpayEnv,
      UNIONPAY_BACK_URL: 'https://pay.example.com/notify/unionpay',
      UNIONPAY_VALIDATE_CN: 'true',
      WECHATPAY_APIV2_KEY: API_V2_KEY,
    },
    { imports: [OrderModule, SettlementModule, TradeModule, NotifyModule], fake: false },
  );
  ({ platforms, ctx, pool } = setup);
});

afterAll(() => setup?.close());

// This suite's module writes nothing in the background; the suites of its worker run one at a time.
async function tableCounts(): Promise<number[]> {
  return Promise.all(TABLES.map((table) => count(pool, `SELECT COUNT(*) FROM ${table}`)));
}

const post = (path: string, headers: Record<string, string>, body: string): Promise<IntakeReply> =>
  receive(ctx, path.replace(/^\/notify\//, ''), headers, body);

async function internalErrors(): Promise<number> {
  const metrics = await exposition();
  return [...metrics.matchAll(/reason="InternalError"\} (\d+)/g)].reduce((sum, [, n]) => sum + Number(n), 0);
}

/** Every answer a 4xx with a message; nothing written; no InternalError counted. */
async function expectEachRefused(bodies: string[], send: (body: string) => Promise<IntakeReply>): Promise<void> {
  const [before, errorsBefore] = [await tableCounts(), await internalErrors()];
  const unexpected: string[] = [];
  for (const body of bodies) {
    const answer = await send(body);
    if (answer.status < 400 || answer.status >= 500 || answer.body.trim() === '') {
      unexpected.push(`${answer.status} ${answer.body.slice(0, 60)} ← ${body.slice(0, 80)}`);
    }
  }
  expect(unexpected).toEqual([]);
  expect(await tableCounts()).toEqual(before);
  expect(await internalErrors()).toBe(errorsBefore);
}

/**
 * Correctly signed but unreadable contents: a 4xx, or acked and kept as a MALFORMED_NOTIFICATION
 * anomaly; never a 5xx, never a payment.
 */
async function expectEachRefusedOrKeptAsMalformed(bodies: string[], send: (body: string) => Promise<IntakeReply>) {
  const payments = () => Promise.all(PAYMENT_TABLES.map((table) => count(pool, `SELECT COUNT(*) FROM ${table}`)));
  const [before, errorsBefore] = [await payments(), await internalErrors()];
  const anomaliesBefore = await malformedAnomalies();
  let acked = 0;
  const unexpected: string[] = [];
  for (const body of bodies) {
    const answer = await send(body);
    if (answer.status < 300) acked++;
    else if (answer.status < 400 || answer.status >= 500) unexpected.push(`${answer.status} ← ${body.slice(0, 80)}`);
  }
  expect(unexpected).toEqual([]);
  expect(await payments()).toEqual(before);
  // Kept ones are recorded as anomalies, one per malformed notification's ids (repeats share one).
  if (acked > 0) expect(await malformedAnomalies()).toBeGreaterThan(anomaliesBefore);
  expect(await internalErrors()).toBe(errorsBefore);
}

function malformedAnomalies(): Promise<number> {
  return count(pool, "SELECT COUNT(*) FROM payment_anomaly WHERE type = 'MALFORMED_NOTIFICATION'");
}

const xml = (body: string) => post('/notify/wechatpay-v2', { 'content-type': 'text/xml' }, body);

function v2RefundNoticeCarrying(record: string): string {
  const { mchid, appid } = platforms.wechatpay;
  return writeV2Xml({
    return_code: 'SUCCESS',
    appid,
    mch_id: mchid,
    nonce_str: 'n',
    req_info: encryptReqInfo(record, API_V2_KEY),
  });
}

function signedApiV3(body: string): Promise<IntakeReply> {
  return post('/notify/wechatpay', signWechatpayBody(platforms.wechatpay.publicKeySigner, body), body);
}

function apiV3Envelope(plaintext: string): string {
  return JSON.stringify({
    id: randomAlphanumeric(16),
    create_time: new Date().toISOString(),
    resource_type: 'encrypt-resource',
    event_type: 'TRANSACTION.SUCCESS',
    summary: 'x',
    resource: encryptWechatpayResource(platforms.wechatpay.apiV3Key, plaintext),
  });
}

/** Hostile fields, each with a real signature: the form parses, the signature holds, then the fields are read. */
function formFields(body: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(body).entries());
}

describe('hostile documents at every notify endpoint', () => {
  it('wechatpay-v2 should refuse each generated XML document with a 4xx, writing nothing', async () => {
    await expectEachRefused(hostileXmlDocuments('xml'), xml);
  });

  it('wechatpay-v2 should refuse each hostile decrypted req_info with a 4xx, writing nothing', async () => {
    const records = hostileXmlDocuments('root', 40, 36).map(v2RefundNoticeCarrying);
    await expectEachRefused(records, xml);
  });

  it('wechatpay should refuse each hostile JSON body, unsigned with a 4xx, signed never with a 5xx', async () => {
    const texts = hostileJsonTexts();
    await expectEachRefusedOrKeptAsMalformed(texts, signedApiV3);
    await expectEachRefused(texts, (body) => post('/notify/wechatpay', { 'content-type': 'application/json' }, body));
  });

  it('wechatpay should refuse or keep as malformed each hostile decrypted resource, never a 5xx', async () => {
    const envelopes = hostileJsonTexts(30, 37).map(apiV3Envelope);
    await expectEachRefusedOrKeptAsMalformed(envelopes, signedApiV3);
  });

  it('alipay should refuse each hostile form, unsigned with a 4xx, signed never with a 5xx', async () => {
    const bodies = hostileFormBodies();
    await expectEachRefused(bodies, (body) => post('/notify/alipay', { 'content-type': FORM }, body));
    const signed = bodies.map((body) => alipayDelivery(platforms.alipay.privateKey, formFields(body)));
    await expectEachRefusedOrKeptAsMalformed(signed, (body) => post('/notify/alipay', { 'content-type': FORM }, body));
  });

  it('unionpay should refuse each hostile form, unsigned with a 4xx, signed never with a 5xx', async () => {
    const bodies = hostileFormBodies(60, 38);
    const send = (body: string) => post('/notify/unionpay', { 'content-type': FORM }, body);
    await expectEachRefused(bodies, send);
    const random = seededRandom(39);
    const signed = bodies.map((body) => {
      const fields: Record<string, string> = { merId: MER_ID, version: '5.1.0', signMethod: '01', ...formFields(body) };
      if (random() < 0.5) fields.txnType = '01';
      return unionpayForm(signUnionpay(fields, unionpayKeys.unionpaySigner));
    });
    await expectEachRefusedOrKeptAsMalformed(signed, send);
  });

  it('should refuse in general terms, naming no configured merchant, app or key', async () => {
    const { mchid, appid, publicKeySigner } = platforms.wechatpay;
    const v2Forgery = writeV2Xml({
      return_code: 'SUCCESS',
      appid,
      mch_id: mchid,
      nonce_str: 'n',
      sign: 'F'.repeat(32),
    });
    const strangerV2 = writeV2Xml({ return_code: 'SUCCESS', appid, mch_id: '1900000001', nonce_str: 'n', sign: 'x' });
    const v3Body = apiV3Envelope('{}');
    const v3Forgery = signWechatpayBody({ ...publicKeySigner, privateKey: generateRsaKeyPair().privateKey }, v3Body);
    const refusals = [
      await xml(v2Forgery),
      await xml(strangerV2),
      await post('/notify/wechatpay', v3Forgery, v3Body),
      await post('/notify/wechatpay', { ...v3Forgery, 'wechatpay-serial': 'PUB_KEY_ID_UNKNOWN' }, v3Body),
    ];

    for (const answer of refusals) {
      expect(answer.status).toBe(401);
      expect(answer.body).toMatch(/\S/);
      for (const configured of [mchid, appid, publicKeySigner.serial, '1900000001', 'PUB_KEY_ID_UNKNOWN']) {
        expect(answer.body).not.toContain(configured);
      }
    }
  });
});
