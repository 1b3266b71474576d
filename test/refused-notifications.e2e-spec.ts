import { createHash } from 'node:crypto';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { alipayDelivery, alipayTradeParams, generateRsaKeyPair, yuan } from '../tools/simulator/platform-signers';
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
 * The admin API of refused notifications: listed for a viewer with its filters
 * checked, read masked by a viewer and exact by an admin (audited), re-verified by an admin only,
 * refusals audited. Keeping them, the caps, the pages and the re-verification's settlement are in
 * test/medium/refused-notifications.medium-spec.ts.
 */
let platforms: TestPlatforms;
let app: RunningApp;
let client: TestClient;
let pool: Pool;

beforeAll(async () => {
  platforms = await createTestPlatforms();
  app = await startApp(platforms.env);
  client = new TestClient(app.url, platforms);
  pool = testDatabasePool();
});

afterAll(async () => {
  await app?.close();
  await pool?.end();
});

/** An Alipay payment signed by someone who is not Alipay, refused (401) and kept; its bytes and row's id. */
async function refusedAlipay(): Promise<{ body: string; id: string }> {
  const { appId, sellerId } = platforms.alipay;
  const trade = { appId, sellerId, outTradeNo: uniqueId('RL'), tradeNo: uniqueId('T'), totalAmount: yuan(100) };
  const body = alipayDelivery(generateRsaKeyPair().privateKey, alipayTradeParams(trade));
  expect((await client.postAlipay(body)).status).toBe(401);
  const sha = createHash('sha256').update(body, 'utf8').digest();
  const [[row]] = await pool.query<RowDataPacket[]>('SELECT id FROM refused_notification WHERE body_sha256 = ?', [sha]);
  return { body, id: String(row.id) };
}

async function audits(target: string): Promise<string[]> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT action FROM admin_audit WHERE target = ? ORDER BY id', [
    target,
  ]);
  return rows.map((r) => String(r.action));
}

const path = (rest: string) => `/admin/refused-notifications${rest}`;
const status = async (method: string, rest: string, token?: string) =>
  (await client.admin(method, path(rest), token)).status;

it('should list for a viewer and refuse bad filters, read masked for a viewer and exact for an admin (audited)', async () => {
  const { body, id } = await refusedAlipay();
  const { viewer, admin } = platforms.admins;

  const listed = await client.admin('GET', path('?channel=ALIPAY&reason=InvalidSignature&limit=1'), viewer);
  expect([listed.status, listed.json<{ items: object[] }>().items]).toEqual([200, [expect.objectContaining({ id })]]);
  const refusals = [await status('GET', '?reason=Nonsense', viewer), await status('GET', '?channel=PAYPAL', viewer)];
  expect([...refusals, await status('GET', '', viewer), await status('GET', '')]).toEqual([400, 400, 200, 401]);
  expect(await status('GET', '/hours', viewer)).toBe(200);

  const asViewer = await client.admin('GET', path(`/${id}`), viewer);
  expect([asViewer.status, asViewer.json()]).toEqual([200, expect.objectContaining({ id, masked: true })]);
  expect(asViewer.json()).toMatchObject({ headers: { 'content-type': expect.any(String) } });
  expect(await audits(`refused-notification:${id}`)).toEqual([]);
  const asAdmin = (await client.admin('GET', path(`/${id}`), admin)).json();
  expect(asAdmin).toMatchObject({ masked: false, rawBody: body, rawBodyBase64: Buffer.from(body).toString('base64') });
  expect(await audits(`refused-notification:${id}`)).toEqual(['PAYLOAD_READ_UNMASKED']);
  expect([await status('GET', '/999999999999', viewer), await status('GET', '/1x', viewer)]).toEqual([404, 400]);
});

it('should re-verify for an admin only, and audit the refusals of a viewer and of a malformed or unknown id', async () => {
  const { id } = await refusedAlipay();
  const { viewer, admin } = platforms.admins;

  const refused = [
    await status('POST', `/${id}/reverify`, viewer),
    await status('POST', '/abc/reverify', admin),
    await status('POST', '/999999999999/reverify', admin),
  ];
  const again = await client.admin('POST', path(`/${id}/reverify`), admin);

  expect(refused).toEqual([403, 400, 404]);
  // Its signature is still not Alipay's: refused again, with the reason.
  expect([again.status, again.json()]).toEqual([
    200,
    expect.objectContaining({ id, accepted: false, status: 'REFUSED', reverifyReason: 'InvalidSignature' }),
  ]);
  expect(again.json()).toMatchObject({ reverifyCount: 1 });
  const [refusedAudit, reverified] = ['REFUSED_NOTIFICATION_REVERIFY_REFUSED', 'REFUSED_NOTIFICATION_REVERIFIED'];
  expect(await audits(`refused-notification:${id}`)).toEqual([refusedAudit, reverified]);
  expect(await audits('refused-notification:abc')).toEqual([refusedAudit]);
});
