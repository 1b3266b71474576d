import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { Channel } from '../src/domain/notification';
import {
  alipayDelivery,
  alipayTradeParams,
  generateRsaKeyPair,
  randomAlphanumeric,
  yuan,
} from '../tools/simulator/platform-signers';
import { createWechatpayAccount } from './support/merchant-accounts';
import { eventually } from './support/eventually';
import { paidOrder } from './support/paid-orders';
import { useOwnDatabase } from './support/test-database';
import {
  createTestPlatforms,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
  uniqueId,
} from './support/test-app';

/**
 * Every admin write route, as the running app registers it (POST, PUT, PATCH, DELETE under /admin),
 * is audited: its success writes the audit row in the change's own transaction (when the row cannot
 * be written, the change rolls back and the write answers 5xx), and its refusals (a viewer's 403,
 * an admin's malformed or unknown target's 4xx) each write a `<action>_REFUSED` row. A route added
 * without its audit, or without a success case here, fails this suite.
 */
const THRESHOLD = 5000;
const SUB_MCHID = '1900000111';
/** An operator whose audit rows of done writes the database refuses (a trigger): their writes must roll back. */
const MALLORY = 'mallory';

let platforms: TestPlatforms;
let app: RunningApp;
let client: TestClient;
let pool: Pool;
let dropDatabase: () => Promise<void>;
let mallory: string;
/** MERCHANT_SECRETS_KEYS_FILE: a rewrap's case puts a new key first. */
let keysFile: string;
const keyLine = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

beforeAll(async () => {
  // Sub-merchants are disabled here: they must not reach another suite's notifications.
  dropDatabase = await useOwnDatabase();
  platforms = await createTestPlatforms();
  mallory = randomAlphanumeric(40);
  keysFile = join(mkdtempSync(join(tmpdir(), 'pcs-secrets-keys-')), 'keys');
  writeFileSync(keysFile, `${keyLine('k0')}\n`);
  app = await startApp({
    MERCHANT_SECRETS_KEYS_FILE: keysFile,
    ...platforms.env,
    ADMIN_TOKENS: `${platforms.env.ADMIN_TOKENS},${MALLORY}:${mallory}:admin`,
    REFUND_APPROVAL_THRESHOLD: String(THRESHOLD),
    WECHATPAY_SUB_MCHIDS: SUB_MCHID,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  });
  client = new TestClient(app.url, platforms);
  pool = testDatabasePool();
  await pool.query(
    `CREATE TRIGGER test_audit_refused_for_mallory BEFORE INSERT ON admin_audit FOR EACH ROW
     BEGIN
       IF NEW.operator_id = '${MALLORY}' AND NEW.action NOT LIKE '%\\_REFUSED' THEN
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the test refuses this audit row';
       END IF;
     END`,
  );
});

afterAll(async () => {
  await pool?.query('DROP TRIGGER IF EXISTS test_audit_refused_for_mallory');
  await app?.close();
  await pool?.end();
  await dropDatabase?.();
});

interface Route {
  method: string;
  path: string;
}

/** The routes of every controller of the running app, read from Nest's metadata, as Fastify serves them. */
function adminWriteRoutes(): Route[] {
  const routes: Route[] = [];
  for (const module of app.app.get(ModulesContainer).values()) {
    for (const { metatype } of module.controllers.values()) {
      if (!metatype) continue;
      const base = String(Reflect.getMetadata(PATH_METADATA, metatype) ?? '');
      const prototype = (metatype as { prototype: Record<string, unknown> }).prototype;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const path = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (path === undefined || method === undefined) continue;
        routes.push({
          method: RequestMethod[method],
          path: `/${base}/${path}`.replace(/\/+/g, '/').replace(/\/$/, ''),
        });
      }
    }
  }
  return routes.filter((r) => r.path.startsWith('/admin/') && ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method));
}

const keyOf = (route: Route) => `${route.method} ${route.path}`;

/** The route's path with every parameter filled with `value`. */
const filled = (route: Route, value: string) => route.path.replace(/:[A-Za-z]+/g, value);

async function lastAuditId(): Promise<number> {
  const [[row]] = await pool.query<RowDataPacket[]>('SELECT COALESCE(MAX(id), 0) AS id FROM admin_audit');
  return Number(row.id);
}

interface Audited {
  operator: string;
  action: string;
  target: string;
  status?: number;
}

async function auditsSince(id: number): Promise<Audited[]> {
  const [rows] = await pool.query<RowDataPacket[]>(
    'SELECT operator_id, action, target, result FROM admin_audit WHERE id > ? ORDER BY id',
    [id],
  );
  return rows.map((r) => {
    const result = (typeof r.result === 'string' ? JSON.parse(r.result) : r.result) as {
      refused?: { status: number };
    } | null;
    return {
      operator: String(r.operator_id),
      action: String(r.action),
      target: String(r.target),
      ...(result?.refused ? { status: result.refused.status } : {}),
    };
  });
}

async function one(sql: string, params: unknown[] = []): Promise<unknown> {
  const [rows] = await pool.query<RowDataPacket[]>(sql, params);
  return JSON.stringify(rows);
}

/** A write ready to succeed: its path and body, who may do it, and a read of what it changes. */
interface Prepared {
  path: string;
  body?: unknown;
  /** The token that succeeds (an admin other than the requester, for four eyes); alice's by default. */
  token?: string;
  state: () => Promise<unknown>;
}

interface SuccessCase {
  prepare: () => Promise<Prepared>;
  status: number;
  /** The audit action of the done write. */
  action: string;
}

const admin = () => platforms.admins.admin;
const admin2 = () => platforms.admins.admin2;

async function refundAwaitingApproval(): Promise<string> {
  const { orderNo, paidBy } = await paidOrder(client, Channel.Alipay, 8000, { prefix: 'WA' });
  const refundNo = uniqueId('WR');
  const body = { orderNo, transactionId: paidBy, amount: 7000, refundNo, reason: 'large refund' };
  expect((await client.admin('POST', '/admin/refunds/emergency', admin(), body)).status).toBe(202);
  return refundNo;
}

const refundState = (refundNo: string) => () =>
  one('SELECT status, reviewed_by FROM refund WHERE refund_no = ?', [refundNo]);

async function duplicateAnomaly(amount: number): Promise<string> {
  const { duplicateBy } = await paidOrder(client, Channel.Alipay, amount, { duplicate: true, prefix: 'WN' });
  const [[row]] = await pool.query<RowDataPacket[]>('SELECT id FROM payment_anomaly WHERE transaction_id = ?', [
    duplicateBy,
  ]);
  return String(row.id);
}

async function anomalyAwaitingApproval(): Promise<string> {
  const id = await duplicateAnomaly(THRESHOLD + 1000);
  const body = { reason: 'ACCEPTED_AS_PAID', note: 'the merchant keeps it' };
  expect((await client.admin('POST', `/admin/anomalies/${id}/resolve`, admin(), body)).status).toBe(200);
  return id;
}

const anomalyState = (id: string) => () =>
  one('SELECT status, resolution_status, resolution_reviewed_by FROM payment_anomaly WHERE id = ?', [id]);

const merchantPath = `/admin/merchants/WECHATPAY`;

async function subMerchant(): Promise<string> {
  const subMerchantId = `19${String(Date.now()).slice(-6)}${Math.floor(Math.random() * 100)}`;
  const path = `${merchantPath}/${platforms.wechatpay.mchid}/sub-merchants`;
  expect((await client.admin('POST', path, admin(), { subMerchantId })).status).toBe(201);
  return subMerchantId;
}

async function disableProposal(subMerchantId: string): Promise<string> {
  const path = `${merchantPath}/${platforms.wechatpay.mchid}/disable`;
  const proposed = await client.admin('POST', path, admin(), { subMerchantId, reason: 'contract ended' });
  expect(proposed.status).toBe(202);
  return proposed.json<{ id: string }>().id;
}

const merchantChanges = () => one('SELECT id, action FROM merchant_change ORDER BY id');
const merchantSecrets = () => one('SELECT id, key_id FROM merchant_secret ORDER BY id');

/** A new WeChat Pay merchant's entry and files, as POST /admin/merchants/WECHATPAY/accounts takes them. */
function newAccountBody(mchid = `17${String(Date.now()).slice(-8)}${Math.floor(Math.random() * 100)}`) {
  const account = createWechatpayAccount(mchid, []);
  return {
    entry: {
      mchid,
      apiV3Key: account.apiV3Key,
      platformPublicKey: { id: account.signer.serial },
      merchantSerialNo: account.merchantSerialNo,
    },
    files: {
      'platformPublicKey.path': readFileSync(account.publicKeyPath, 'utf8'),
      merchantPrivateKeyPath: readFileSync(account.merchantPrivateKeyPath, 'utf8'),
    },
  };
}

async function directoryAccount(): Promise<ReturnType<typeof newAccountBody>> {
  const body = newAccountBody();
  expect((await client.admin('POST', `${merchantPath}/accounts`, admin(), body)).status).toBe(201);
  return body;
}

async function webhookEndpoint(): Promise<string> {
  // Refunds closed only: the payments paid here fan out to no delivery of it.
  const body = { url: 'https://127.0.0.1:9/hook', eventTypes: ['refund.closed'] };
  const created = await client.admin('POST', '/admin/webhook-endpoints', admin(), body);
  expect(created.status).toBe(201);
  return created.json<{ id: string }>().id;
}

const endpointState = (id: string) => () =>
  one('SELECT enabled, description, secret, event_types FROM webhook_endpoint WHERE id = ?', [id]);
const deliveriesOf = (id: string, eventId: string) => () =>
  one('SELECT status, next_attempt_at FROM webhook_delivery WHERE endpoint_id = ? AND event_id = ?', [id, eventId]);

async function outboxEvent(deadLettered = false): Promise<string> {
  const eventId = randomUUID();
  const orderNo = `WE-${eventId}`;
  await pool.query(
    `INSERT INTO outbox_event (event_id, type, order_no, payload, created_at, dead_lettered_at)
     VALUES (?, 'payment.succeeded', ?, ?, NOW(3), ?)`,
    [
      eventId,
      orderNo,
      JSON.stringify({ eventId, type: 'payment.succeeded', orderNo }),
      deadLettered ? new Date() : null,
    ],
  );
  return eventId;
}

/** A success of each admin write: a route without one here fails the suite, so that its audit is checked. */
const SUCCESSES: Record<string, SuccessCase> = {
  'POST /admin/refunds/emergency': {
    status: 202,
    action: 'EMERGENCY_REFUND',
    prepare: async () => {
      const { orderNo, paidBy } = await paidOrder(client, Channel.Alipay, 300, { prefix: 'WE' });
      const refundNo = uniqueId('WR');
      const body = { orderNo, transactionId: paidBy, amount: 100, refundNo, reason: 'paid by mistake' };
      return { path: '/admin/refunds/emergency', body, state: refundState(refundNo) };
    },
  },
  'POST /admin/refunds/:refundNo/resolve-offline': {
    status: 200,
    action: 'REFUND_RESOLVED_OFFLINE',
    prepare: async () => {
      const refundNo = await refundAwaitingApproval();
      // What a refund the channel answered ABNORMAL for is: never sent again, waiting for an operator.
      await pool.query(`UPDATE refund SET status = 'ABNORMAL' WHERE refund_no = ?`, [refundNo]);
      const path = `/admin/refunds/${refundNo}/resolve-offline`;
      return { path, body: { reason: 'paid back in cash' }, state: refundState(refundNo) };
    },
  },
  'POST /admin/refunds/:refundNo/approve': {
    status: 200,
    action: 'REFUND_APPROVED',
    prepare: async () => {
      const refundNo = await refundAwaitingApproval();
      return { path: `/admin/refunds/${refundNo}/approve`, token: admin2(), state: refundState(refundNo) };
    },
  },
  'POST /admin/refunds/:refundNo/reject': {
    status: 200,
    action: 'REFUND_REJECTED',
    prepare: async () => {
      const refundNo = await refundAwaitingApproval();
      return { path: `/admin/refunds/${refundNo}/reject`, body: { reason: 'no' }, state: refundState(refundNo) };
    },
  },
  'POST /admin/anomalies/:id/resolve': {
    status: 200,
    action: 'ANOMALY_RESOLVED',
    prepare: async () => {
      const id = await duplicateAnomaly(1000);
      const body = { reason: 'ACCEPTED_AS_PAID', note: 'the merchant keeps it' };
      return { path: `/admin/anomalies/${id}/resolve`, body, state: anomalyState(id) };
    },
  },
  'POST /admin/anomalies/:id/resolution/approve': {
    status: 200,
    action: 'ANOMALY_RESOLUTION_APPROVED',
    prepare: async () => {
      const id = await anomalyAwaitingApproval();
      return { path: `/admin/anomalies/${id}/resolution/approve`, token: admin2(), state: anomalyState(id) };
    },
  },
  'POST /admin/anomalies/:id/resolution/reject': {
    status: 200,
    action: 'ANOMALY_RESOLUTION_REJECTED',
    prepare: async () => {
      const id = await anomalyAwaitingApproval();
      return { path: `/admin/anomalies/${id}/resolution/reject`, body: { reason: 'no' }, state: anomalyState(id) };
    },
  },
  'POST /admin/dead-letters/:eventId/replay': {
    status: 200,
    action: 'DEAD_LETTER_REPLAYED',
    prepare: async () => {
      const eventId = await outboxEvent(true);
      const state = () => one('SELECT dead_lettered_at FROM outbox_event WHERE event_id = ?', [eventId]);
      return { path: `/admin/dead-letters/${eventId}/replay`, state };
    },
  },
  'POST /admin/reconciliations/:channel/:date/run': {
    status: 202,
    action: 'RECONCILE',
    prepare: async () => {
      const date = '2019-05-07';
      await pool.query('DELETE FROM reconciliation_run WHERE bill_date = ?', [date]);
      // The runs' rows are made ready before the claim, in statements of their own: the claim is what counts.
      const state = () =>
        one('SELECT COALESCE(SUM(attempts), 0) AS n FROM reconciliation_run WHERE bill_date = ?', [date]);
      return { path: `/admin/reconciliations/alipay/${date}/run`, body: {}, state };
    },
  },
  'POST /admin/refused-notifications/:id/reverify': {
    status: 200,
    action: 'REFUSED_NOTIFICATION_REVERIFIED',
    prepare: async () => {
      // An Alipay payment signed by someone who is not Alipay: refused (401) and kept; re-verified, refused again.
      const { appId, sellerId } = platforms.alipay;
      const trade = { appId, sellerId, outTradeNo: uniqueId('WF'), tradeNo: uniqueId('T'), totalAmount: yuan(100) };
      const forged = alipayDelivery(generateRsaKeyPair().privateKey, alipayTradeParams(trade));
      expect((await client.postAlipay(forged)).status).toBe(401);
      const sha = createHash('sha256').update(forged, 'utf8').digest();
      const [[row]] = await pool.query<RowDataPacket[]>('SELECT id FROM refused_notification WHERE body_sha256 = ?', [
        sha,
      ]);
      const state = () => one('SELECT status, reverify_count FROM refused_notification WHERE id = ?', [row.id]);
      return { path: `/admin/refused-notifications/${row.id}/reverify`, state };
    },
  },
  'POST /admin/merchants/:channel/:account/key-dry-run': {
    status: 200,
    action: 'PLATFORM_KEY_DRY_RUN',
    prepare: () => {
      const body = { kind: 'publicKey', candidatePem: readFileSync(platforms.env.ALIPAY_PUBLIC_KEY_PATH, 'utf8') };
      // A dry run changes no key: its audit row and its KEY_DRY_RUN history row are all its transaction holds.
      return Promise.resolve({
        path: `/admin/merchants/ALIPAY/${platforms.alipay.appId}/key-dry-run`,
        body,
        state: merchantChanges,
      });
    },
  },
  'POST /admin/merchants/:channel/:account/platform-keys': {
    status: 202,
    action: 'PLATFORM_KEY_PROPOSED',
    prepare: async () => {
      // A candidate is proposed only after a dry run of it: the dry run is part of the preparation.
      const candidatePem = generateRsaKeyPair().publicKeyPem;
      const account = `/admin/merchants/ALIPAY/${platforms.alipay.appId}`;
      const body = { kind: 'publicKey', candidatePem };
      expect((await client.admin('POST', `${account}/key-dry-run`, admin(), body)).status).toBe(200);
      return { path: `${account}/platform-keys`, body, state: merchantChanges };
    },
  },
  'POST /admin/merchants/:channel/:account/sub-merchants': {
    status: 201,
    action: 'MERCHANT_SUB_MERCHANT_ADDED',
    prepare: () => {
      const subMerchantId = `18${String(Date.now()).slice(-6)}`;
      const path = `${merchantPath}/${platforms.wechatpay.mchid}/sub-merchants`;
      return Promise.resolve({ path, body: { subMerchantId }, state: merchantChanges });
    },
  },
  'POST /admin/merchants/:channel/:account/disable': {
    status: 202,
    action: 'MERCHANT_DISABLE_PROPOSED',
    prepare: async () => {
      const subMerchantId = await subMerchant();
      const path = `${merchantPath}/${platforms.wechatpay.mchid}/disable`;
      return { path, body: { subMerchantId, reason: 'contract ended' }, state: merchantChanges };
    },
  },
  'POST /admin/merchants/:channel/:account/enable': {
    status: 200,
    action: 'MERCHANT_ENABLED',
    prepare: async () => {
      const subMerchantId = await subMerchant();
      const id = await disableProposal(subMerchantId);
      expect((await client.admin('POST', `/admin/merchant-changes/${id}/approve`, admin2())).status).toBe(200);
      const path = `${merchantPath}/${platforms.wechatpay.mchid}/enable`;
      return { path, body: { subMerchantId }, state: merchantChanges };
    },
  },
  'POST /admin/merchant-changes/:id/approve': {
    status: 200,
    action: 'MERCHANT_CHANGE_APPROVED',
    prepare: async () => {
      const id = await disableProposal(await subMerchant());
      return { path: `/admin/merchant-changes/${id}/approve`, token: admin2(), state: merchantChanges };
    },
  },
  'POST /admin/merchant-changes/:id/reject': {
    status: 200,
    action: 'MERCHANT_CHANGE_REJECTED',
    prepare: async () => {
      const id = await disableProposal(await subMerchant());
      return { path: `/admin/merchant-changes/${id}/reject`, body: { reason: 'no' }, state: merchantChanges };
    },
  },
  'POST /admin/merchants/:channel/accounts': {
    status: 201,
    action: 'MERCHANT_ACCOUNT_ADDED',
    prepare: () =>
      Promise.resolve({ path: `${merchantPath}/accounts`, body: newAccountBody(), state: merchantChanges }),
  },
  'PUT /admin/merchants/:channel/:account': {
    status: 202,
    action: 'MERCHANT_ACCOUNT_CHANGE_PROPOSED',
    prepare: async () => {
      const added = await directoryAccount();
      const body = { ...added, files: { ...added.files, 'platformPublicKey.path': generateRsaKeyPair().publicKeyPem } };
      return { path: `${merchantPath}/${added.entry.mchid}`, body, state: merchantChanges };
    },
  },
  'POST /admin/merchant-secrets/rewrap': {
    status: 200,
    action: 'MERCHANT_SECRETS_REWRAPPED',
    prepare: async () => {
      await directoryAccount();
      const keyId = `k${Date.now()}`;
      writeFileSync(keysFile, `${keyLine(keyId)}\n${readFileSync(keysFile, 'utf8')}`);
      return { path: '/admin/merchant-secrets/rewrap', body: { keyId }, state: merchantSecrets };
    },
  },
  'POST /admin/webhook-endpoints': {
    status: 201,
    action: 'WEBHOOK_ENDPOINT_CREATED',
    prepare: () => {
      const url = `https://127.0.0.1:9/${randomUUID()}`;
      const state = () => one('SELECT id FROM webhook_endpoint WHERE url = ?', [url]);
      return Promise.resolve({ path: '/admin/webhook-endpoints', body: { url }, state });
    },
  },
  'PATCH /admin/webhook-endpoints/:id': {
    status: 200,
    action: 'WEBHOOK_ENDPOINT_UPDATED',
    prepare: async () => {
      const id = await webhookEndpoint();
      const body = { description: 'renamed', enabled: false };
      return { path: `/admin/webhook-endpoints/${id}`, body, state: endpointState(id) };
    },
  },
  'POST /admin/webhook-endpoints/:id/rotate-secret': {
    status: 200,
    action: 'WEBHOOK_SECRET_ROTATED',
    prepare: async () => {
      const id = await webhookEndpoint();
      return { path: `/admin/webhook-endpoints/${id}/rotate-secret`, state: endpointState(id) };
    },
  },
  'DELETE /admin/webhook-endpoints/:id': {
    status: 200,
    action: 'WEBHOOK_ENDPOINT_DELETED',
    prepare: async () => {
      const id = await webhookEndpoint();
      return { path: `/admin/webhook-endpoints/${id}`, state: endpointState(id) };
    },
  },
  'POST /admin/webhook-endpoints/:id/resend': {
    status: 202,
    action: 'WEBHOOK_RESENT',
    prepare: async () => {
      const id = await webhookEndpoint();
      const eventId = await outboxEvent();
      return { path: `/admin/webhook-endpoints/${id}/resend`, body: { eventId }, state: deliveriesOf(id, eventId) };
    },
  },
  'POST /admin/webhook-endpoints/:id/recover': {
    status: 202,
    action: 'WEBHOOK_RECOVERED',
    prepare: async () => {
      const id = await webhookEndpoint();
      const eventId = randomUUID();
      // A delivery that failed for good: only a recovery sends it again.
      await pool.query(
        `INSERT INTO webhook_delivery (endpoint_id, event_id, event_type, order_no, body, status, attempts,
           schedule_start, next_attempt_at, created_at, finished_at)
         VALUES (?, ?, 'refund.closed', ?, '{}', 'FAILED', 1, 0, NOW(3), NOW(3), NOW(3))`,
        [id, eventId, `WE-${eventId}`],
      );
      const body = { since: new Date(Date.now() - 3600_000).toISOString() };
      return { path: `/admin/webhook-endpoints/${id}/recover`, body, state: deliveriesOf(id, eventId) };
    },
  },
};

describe('every admin write route', () => {
  it('should be found in the running app, each one registered with Fastify', () => {
    const routes = adminWriteRoutes();
    const fastify = app.app.getHttpAdapter().getInstance();

    expect(routes.length).toBeGreaterThanOrEqual(Object.keys(SUCCESSES).length);
    expect(routes.filter((r) => !fastify.hasRoute({ method: r.method, url: r.path }))).toEqual([]);
  });

  it('should have a success case here', () => {
    expect(
      adminWriteRoutes()
        .map(keyOf)
        .filter((key) => !SUCCESSES[key]),
    ).toEqual([]);
  });

  it("should audit a viewer's attempt, refused with 403, as <action>_REFUSED", async () => {
    const unaudited: string[] = [];
    for (const route of adminWriteRoutes()) {
      const since = await lastAuditId();
      const answer = await client.admin(route.method, filled(route, '1'), platforms.admins.viewer, {});
      const rows = await auditsSince(since);
      const refused = rows.length === 1 && rows[0].action.endsWith('_REFUSED') && rows[0].status === 403;
      if (answer.status !== 403 || !refused || rows[0].operator !== 'victor') {
        unaudited.push(`${keyOf(route)}: ${answer.status} ${JSON.stringify(rows)}`);
      }
    }
    expect(unaudited).toEqual([]);
  });

  it("should audit an admin's write refused for its input (an unknown target or field) as <action>_REFUSED", async () => {
    const unaudited: string[] = [];
    for (const route of adminWriteRoutes()) {
      const since = await lastAuditId();
      const body = route.method === 'DELETE' ? undefined : { notAField: true };
      const answer = await client.admin(route.method, filled(route, '0'), admin(), body);
      const rows = await auditsSince(since);
      const refused = rows.length === 1 && rows[0].action.endsWith('_REFUSED') && rows[0].status === answer.status;
      if (answer.status < 400 || answer.status >= 500 || !refused || rows[0].operator !== 'alice') {
        unaudited.push(`${keyOf(route)}: ${answer.status} ${JSON.stringify(rows)}`);
      }
    }
    expect(unaudited).toEqual([]);
  });

  it('should write a success and its audit row in one transaction: when the row fails, nothing changes', async () => {
    const failures: string[] = [];
    for (const route of adminWriteRoutes()) {
      const success = SUCCESSES[keyOf(route)];
      if (!success) continue;
      const prepared = await success.prepare();
      const before = await prepared.state();

      const failed = await client.admin(route.method, prepared.path, mallory, prepared.body);
      const unchanged = (await prepared.state()) === before;
      const since = await lastAuditId();
      const done = await client.admin(route.method, prepared.path, prepared.token ?? admin(), prepared.body);
      const rows = await auditsSince(since);

      const audited = rows.some((r) => r.action === success.action && !r.operator.startsWith(MALLORY));
      if (failed.status < 500 || !unchanged || done.status !== success.status || !audited) {
        failures.push(
          `${keyOf(route)}: without its audit row ${failed.status}${unchanged ? '' : ' and changed'}, ` +
            `then ${done.status} ${done.body.slice(0, 200)} ${JSON.stringify(rows)}`,
        );
      }
    }
    expect(failures).toEqual([]);
  });
});

describe("an account's audit rows", () => {
  it('should keep its public facts only, refused or done, never its keys', async () => {
    const body = newAccountBody();
    const secrets = [
      body.entry.apiV3Key,
      body.files.merchantPrivateKeyPath.split('\n').filter((l) => l && !l.startsWith('-----'))[2],
    ];
    const since = await lastAuditId();
    const malformed = { ...body, entry: { ...body.entry, merchantSerialNo: 'not hex' } };
    const refused = await client.admin('POST', `${merchantPath}/accounts`, admin(), malformed);
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('entry.merchantSerialNo must be the certificate serial in hex');
    expect((await client.admin('POST', `${merchantPath}/accounts`, admin(), body)).status).toBe(201);

    const [rows] = await pool.query<Array<RowDataPacket & { action: string; request_body: unknown; result: unknown }>>(
      'SELECT action, request_body, result FROM admin_audit WHERE id > ? ORDER BY id',
      [since],
    );
    expect(rows.map((r) => r.action)).toEqual(['MERCHANT_ACCOUNT_ADD_REFUSED', 'MERCHANT_ACCOUNT_ADDED']);
    for (const row of rows) {
      const text = JSON.stringify([row.request_body, row.result]);
      expect(text).toContain(body.entry.mchid);
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
    // Listed once the directory's poll applied it (within applyWithinMs), public facts only.
    let listed = '';
    await eventually('the account to be listed', async () => {
      const answer = await client.admin('GET', '/admin/merchants', admin());
      listed = answer.body;
      return answer
        .json<{ accounts: Array<{ account: string; source: string }> }>()
        .accounts.some((a) => a.account === body.entry.mchid && a.source === 'directory');
    });
    for (const secret of secrets) expect(listed).not.toContain(secret);
  });
});

describe("a directory account's change", () => {
  it("should be a proposal whose proposer's approval is refused and audited, and another admin's applies", async () => {
    const added = await directoryAccount();
    const body = { ...added, files: { ...added.files, 'platformPublicKey.path': generateRsaKeyPair().publicKeyPem } };
    const since = await lastAuditId();
    const proposed = await client.admin('PUT', `${merchantPath}/${added.entry.mchid}`, admin(), body);
    expect(proposed.status).toBe(202);
    const { id } = proposed.json<{ id: string }>();
    const own = await client.admin('POST', `/admin/merchant-changes/${id}/approve`, admin());
    expect(own.status).toBe(403);
    const approved = await client.admin('POST', `/admin/merchant-changes/${id}/approve`, admin2());
    expect(approved.status).toBe(200);
    const approval = approved.json<{ id: string }>().id;
    await eventually('the approved entry to be in force', async () =>
      (await client.admin('GET', '/admin/merchants', admin()))
        .json<{ accounts: Array<{ account: string; changeId?: string }> }>()
        .accounts.some((a) => a.account === added.entry.mchid && a.changeId === approval),
    );
    // The configuration's account is changed in the configuration only.
    const configured = await client.admin('PUT', `${merchantPath}/${platforms.wechatpay.mchid}`, admin(), {
      ...body,
      entry: { ...body.entry, mchid: platforms.wechatpay.mchid },
    });
    expect(configured.status).toBe(409);
    expect((await auditsSince(since)).map((r) => [r.operator, r.action, r.status])).toEqual([
      ['alice', 'MERCHANT_ACCOUNT_CHANGE_PROPOSED', undefined],
      ['alice', 'MERCHANT_CHANGE_APPROVE_REFUSED', 403],
      ['bob', 'MERCHANT_CHANGE_APPROVED', undefined],
      ['alice', 'MERCHANT_ACCOUNT_CHANGE_REFUSED', 409],
    ]);
  });
});
