import { Pool, RowDataPacket } from 'mysql2/promise';
import { generateRsaKeyPair } from '../tools/simulator/platform-signers';
import { eventually } from './support/eventually';
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
 * The merchant directory's admin routes over HTTP: roles, validation, four eyes, and the audit of
 * each change and each refusal. What the changes do to notifications on two replicas is in
 * test/medium/merchant-directory.medium-spec.ts.
 */
let platforms: TestPlatforms;
let app: RunningApp;
let client: TestClient;
let pool: Pool;
let dropDatabase: () => Promise<void>;

beforeAll(async () => {
  // A disabled account is the database's: it must not reach another suite's notifications.
  dropDatabase = await useOwnDatabase();
  platforms = await createTestPlatforms();
  app = await startApp(platforms.env);
  client = new TestClient(app.url, platforms);
  pool = testDatabasePool();
});

afterAll(async () => {
  await app?.close();
  await pool?.end();
  await dropDatabase?.();
});

async function audits(action: string): Promise<Array<{ operator_id: string; result: unknown }>> {
  const [rows] = await pool.query<RowDataPacket[]>(
    'SELECT operator_id, result FROM admin_audit WHERE action = ? ORDER BY id',
    [action],
  );
  return rows.map((r) => ({
    operator_id: String(r.operator_id),
    result: (typeof r.result === 'string' ? JSON.parse(r.result) : r.result) as unknown,
  }));
}

async function changeCount(): Promise<number> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM merchant_change');
  return Number(rows[0].n);
}

/** The changes but the dry runs' records. */
async function proposalCount(): Promise<number> {
  const [rows] = await pool.query<RowDataPacket[]>(
    "SELECT COUNT(*) AS n FROM merchant_change WHERE action <> 'KEY_DRY_RUN'",
  );
  return Number(rows[0].n);
}

describe('the merchant directory over the admin API', () => {
  it("should disable an account only with a second admin's approval, refusing and auditing the proposer's own, and enable it again", async () => {
    const { admin, admin2, viewer } = platforms.admins;
    const appId = platforms.alipay.appId;
    const path = `/admin/merchants/ALIPAY/${appId}`;

    expect((await client.admin('POST', `${path}/disable`, viewer, { reason: 'contract ended' })).status).toBe(403);
    expect((await client.admin('POST', `${path}/disable`, admin, {})).status).toBe(400);
    expect(
      (await client.admin('POST', '/admin/merchants/ALIPAY/2021000000000000/disable', admin, { reason: 'x' })).status,
    ).toBe(404);
    expect(await changeCount()).toBe(0);
    expect((await audits('MERCHANT_DISABLE_REFUSED')).map((a) => a.operator_id)).toEqual(['victor', 'alice', 'alice']);

    const proposed = await client.admin('POST', `${path}/disable`, admin, { reason: 'contract ended' });
    expect(proposed.status).toBe(202);
    const { id } = proposed.json<{ id: string; action: string }>();

    const own = await client.admin('POST', `/admin/merchant-changes/${id}/approve`, admin);
    expect(own.status).toBe(403);
    expect(await audits('MERCHANT_CHANGE_APPROVE_REFUSED')).toEqual([
      {
        operator_id: 'alice',
        result: { refused: expect.objectContaining({ status: 403, code: 'Forbidden' }) },
      },
    ]);
    // The listing is the directory this replica holds: the proposal shows once its poll has read it.
    await eventually(
      'the proposal listed',
      async () =>
        (await client.admin('GET', '/admin/merchants', viewer)).json<{ pending: unknown[] }>().pending.length === 1,
    );

    const approved = await client.admin('POST', `/admin/merchant-changes/${id}/approve`, admin2);
    expect(approved.status).toBe(200);
    expect((await client.admin('POST', `/admin/merchant-changes/${id}/approve`, admin2)).status).toBe(409);
    expect((await audits('MERCHANT_CHANGE_APPROVED')).map((a) => a.operator_id)).toEqual(['bob']);

    await eventually('the directory to hold the account disabled', async () => {
      const listed = (await client.admin('GET', '/admin/merchants', viewer)).json<{
        accounts: Array<{ channel: string; account: string; disabled: boolean }>;
      }>();
      return listed.accounts.some((a) => a.channel === 'ALIPAY' && a.account === appId && a.disabled);
    });
    const orderNo = uniqueId('MDE');
    expect((await client.registerOrder({ orderNo, amount: 100 })).status).toBe(201);
    const refused = await client.postAlipay(
      client.alipayPayment({ outTradeNo: orderNo, tradeNo: uniqueId('T'), totalAmount: '1.00' }),
    );
    expect(refused.body).not.toBe('success');

    expect((await client.admin('POST', `${path}/enable`, admin, {})).status).toBe(200);
    expect((await client.admin('POST', `${path}/enable`, admin, {})).status).toBe(409);
    const history = (await client.admin('GET', '/admin/merchant-changes', viewer)).json<Array<{ action: string }>>();
    expect(history.map((c) => c.action)).toEqual(['ENABLED', 'APPROVED', 'DISABLE_PROPOSED']);
  });

  it('should answer a dry run to admins only, and audit each refusal', async () => {
    const { admin, viewer } = platforms.admins;
    const path = `/admin/merchants/ALIPAY/${platforms.alipay.appId}/key-dry-run`;
    const body = { kind: 'publicKey', candidatePem: 'not a key' };
    expect((await client.admin('POST', path, viewer, body)).status).toBe(403);
    expect((await client.admin('POST', path, admin, body)).status).toBe(400);
    expect((await client.admin('POST', path, admin, { kind: 'publicKey' })).status).toBe(400);
    expect((await audits('PLATFORM_KEY_DRY_RUN_REFUSED')).map((a) => a.operator_id)).toEqual([
      'victor',
      'alice',
      'alice',
    ]);
  });

  it("should propose a platform key only after its dry run, refuse bad input writing only the refusal's audit, and activate it with another admin's approval", async () => {
    const { admin, admin2, viewer } = platforms.admins;
    const appId = platforms.alipay.appId;
    const path = `/admin/merchants/ALIPAY/${appId}`;
    const next = generateRsaKeyPair();
    const body = { kind: 'publicKey', candidatePem: next.publicKeyPem, overlapSeconds: 3600 };
    const before = await proposalCount();

    expect((await client.admin('POST', `${path}/platform-keys`, viewer, body)).status).toBe(403);
    const untried = await client.admin('POST', `${path}/platform-keys`, admin, body);
    expect(untried.status).toBe(409);
    expect(untried.json<{ error: string }>().error).toBe('DryRunRequired');
    for (const bad of [
      { ...body, candidatePem: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n' },
      { ...body, kind: 'rootCert' },
      { ...body, overlapSeconds: 7 * 24 * 3600 + 1 },
      { ...body, overlapSeconds: -1 },
      { ...body, overlapSeconds: 1.5 },
      { kind: 'publicKey' },
    ]) {
      expect((await client.admin('POST', `${path}/platform-keys`, admin, bad)).status).toBe(400);
    }
    expect(
      (await client.admin('POST', '/admin/merchants/ALIPAY/2021000000000000/platform-keys', admin, body)).status,
    ).toBe(404);
    // WeChat Pay names its public key by an id: a new key needs its own.
    const wechatpay = `/admin/merchants/WECHATPAY/${platforms.wechatpay.mchid}`;
    const wechatKey = { kind: 'publicKey', candidatePem: generateRsaKeyPair().publicKeyPem };
    expect((await client.admin('POST', `${wechatpay}/key-dry-run`, admin, wechatKey)).status).toBe(200);
    expect((await client.admin('POST', `${wechatpay}/platform-keys`, admin, wechatKey)).status).toBe(400);
    expect(await proposalCount()).toBe(before);
    expect((await audits('PLATFORM_KEY_PROPOSE_REFUSED')).map((a) => a.operator_id)).toEqual([
      'victor',
      ...Array<string>(9).fill('alice'),
    ]);
    expect(await audits('PLATFORM_KEY_PROPOSED')).toEqual([]);

    const tried = { kind: body.kind, candidatePem: body.candidatePem };
    expect((await client.admin('POST', `${path}/key-dry-run`, admin, tried)).status).toBe(200);
    const proposed = await client.admin('POST', `${path}/platform-keys`, admin, body);
    expect(proposed.status).toBe(202);
    const { id, candidateFingerprint } = proposed.json<{ id: string; candidateFingerprint: string }>();
    expect(await audits('PLATFORM_KEY_PROPOSED')).toEqual([
      { operator_id: 'alice', result: { changeId: id, action: 'PLATFORM_KEY_PROPOSED' } },
    ]);

    expect((await client.admin('POST', `/admin/merchant-changes/${id}/approve`, admin)).status).toBe(403);
    expect((await client.admin('POST', `/admin/merchant-changes/${id}/approve`, admin2)).status).toBe(200);
    await eventually('the directory to hold the key', async () => {
      const listed = (await client.admin('GET', '/admin/merchants', viewer)).json<{
        platformKeys: Array<{ account: string; kind: string; fingerprint: string; previousFingerprint: null }>;
      }>();
      return listed.platformKeys.some(
        (k) => k.account === appId && k.kind === 'publicKey' && k.fingerprint === candidateFingerprint,
      );
    });
    // The overlap window: the key in force still pays.
    const orderNo = uniqueId('MDK');
    expect((await client.registerOrder({ orderNo, amount: 100 })).status).toBe(201);
    const paid = await client.postAlipay(
      client.alipayPayment({ outTradeNo: orderNo, tradeNo: uniqueId('T'), totalAmount: '1.00' }),
    );
    expect(paid.body).toBe('success');
  });
});
