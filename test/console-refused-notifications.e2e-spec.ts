import { createHash } from 'node:crypto';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { Page } from 'playwright-core';
import { generateRsaKeyPair } from '../tools/simulator/platform-signers';
import { accessibilityViolations, AxeViolation, buildConsole, launchChromium, RunningBrowser } from './support/browser';
import {
  count,
  createTestPlatforms,
  RunningApp,
  startApp,
  TestClient,
  testDatabasePool,
  TestPlatforms,
  uniqueId,
} from './support/test-app';

/**
 * Issue 39, item 2, in Debian's Chromium: the console's "Refused notifications" page lists what was
 * kept and why, a viewer reads it masked and cannot re-verify, an admin re-verifies a notification
 * for an order registered since, which pays it; in English and in Chinese, with axe-core.
 */
let platforms: TestPlatforms;
let app: RunningApp;
let client: TestClient;
let pool: Pool;
let chromium: RunningBrowser;
const consoleErrors: string[] = [];

beforeAll(async () => {
  buildConsole();
  platforms = await createTestPlatforms();
  app = await startApp(platforms.env);
  client = new TestClient(app.url, platforms);
  pool = testDatabasePool();
  chromium = await launchChromium();
});

afterAll(async () => {
  await chromium?.close();
  await app?.close();
  await pool?.end();
});

async function signedIn(token: string): Promise<Page> {
  const page = await (await chromium.operator()).newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  await page.goto(`${app.url}/console/`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  return page;
}

async function go(page: Page, hash: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${app.url}/console/${hash}`);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  await page
    .getByText(/^(Loading…|加载中…)$/)
    .first()
    .waitFor({ state: 'detached' });
}

async function keptId(body: string): Promise<string> {
  const [rows] = await pool.query<RowDataPacket[]>(
    "SELECT id FROM refused_notification WHERE channel = 'WECHATPAY' AND body_sha256 = ?",
    [createHash('sha256').update(body, 'utf8').digest()],
  );
  expect(rows).toHaveLength(1);
  return String(rows[0].id);
}

describe('the console: refused notifications', () => {
  it('should list, read and (for an admin) re-verify, in English and in Chinese, passing axe-core', async () => {
    // A forged signature, and a payment for an order not registered yet.
    const forged = client.wechatpayPayment(
      { outTradeNo: uniqueId('CF'), transactionId: uniqueId('T'), total: 100 },
      { signer: { ...platforms.wechatpay.publicKeySigner, privateKey: generateRsaKeyPair().privateKey } },
    );
    expect((await client.postWechatpay(forged)).status).toBe(401);
    const orderNo = uniqueId('CU');
    const early = client.wechatpayPayment({ outTradeNo: orderNo, transactionId: uniqueId('T'), total: 1234 });
    expect((await client.postWechatpay(early)).status).toBe(404);
    const [forgedId, earlyId] = [await keptId(forged.body), await keptId(early.body)];
    const violations: Record<string, AxeViolation[]> = {};
    const check = async (page: Page, name: string) => {
      const found = await accessibilityViolations(page);
      if (found.length > 0) violations[name] = found;
    };

    // A viewer: the list with its filters, one read masked, the re-verification disabled.
    const viewer = await signedIn(platforms.admins.viewer);
    await viewer.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Refused notifications' }).click();
    await viewer.getByRole('heading', { name: 'Refused notifications', level: 1 }).waitFor();
    await go(viewer, '#/refused?channel=WECHATPAY&reason=InvalidSignature', 'Refused notifications');
    await viewer.getByRole('link', { name: `Open #${forgedId}` }).waitFor();
    expect(await viewer.getByRole('link', { name: `Open #${earlyId}` }).count()).toBe(0);
    await check(viewer, 'viewer list');
    await viewer.getByRole('link', { name: `Open #${forgedId}` }).click();
    await viewer.getByRole('heading', { name: `Refused notification #${forgedId}`, level: 1 }).waitFor();
    await viewer.getByText('InvalidSignature').first().waitFor();
    await viewer.getByText("The payer's identifiers are masked for a viewer.").waitFor();
    expect(await viewer.getByRole('button', { name: 'Re-verify' }).isDisabled()).toBe(true);
    await check(viewer, 'viewer detail');

    // An admin, after registering the order: re-verified, accepted, paid.
    expect((await client.registerOrder({ orderNo, amount: 1234 })).status).toBe(201);
    const admin = await signedIn(platforms.admins.admin);
    await go(admin, `#/refused/${earlyId}`, `Refused notification #${earlyId}`);
    await admin.getByText('OrderNotFound').first().waitFor();
    await admin.getByRole('button', { name: 'Re-verify' }).click();
    await admin.getByRole('status').getByText('Accepted: it verified and was settled.').waitFor();
    await admin.getByText('ACCEPTED').first().waitFor();
    expect(
      await count(pool, "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'PAID'", [orderNo]),
    ).toBe(1);
    expect(
      await count(
        pool,
        "SELECT COUNT(*) FROM admin_audit WHERE target = ? AND action = 'REFUSED_NOTIFICATION_REVERIFIED'",
        [`refused-notification:${earlyId}`],
      ),
    ).toBe(1);
    await check(admin, 'admin detail');
    // The forged one is refused again, and says so.
    await go(admin, `#/refused/${forgedId}`, `Refused notification #${forgedId}`);
    await admin.getByRole('button', { name: 'Re-verify' }).click();
    await admin.getByRole('status').getByText('Refused again: InvalidSignature').waitFor();

    // In Chinese.
    await admin.getByRole('button', { name: '中文' }).click();
    await go(admin, '#/refused', '被拒绝的通知');
    await admin.getByRole('link', { name: `打开 #${earlyId}` }).waitFor();
    await admin.getByText('每渠道、每小时、每类最多保存新通知数').waitFor();
    await check(admin, 'zh list');
    await go(admin, `#/refused/${forgedId}`, `被拒绝的通知 #${forgedId}`);
    await admin.getByRole('button', { name: '重新验签' }).waitFor();
    await check(admin, 'zh detail');

    expect(violations).toEqual({});
    expect(consoleErrors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
  }, 120_000);
});
