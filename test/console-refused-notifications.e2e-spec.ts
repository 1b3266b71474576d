import { createHash } from 'node:crypto';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { Page } from 'playwright-core';
import { generateRsaKeyPair } from '../tools/simulator/platform-signers';
import {
  accessibilityViolations,
  AxeViolation,
  buildConsole,
  launchChromium,
  RunningBrowser,
  saveScreenshot,
} from './support/browser';
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
 * In Debian's Chromium: the console's "Refused notifications" page lists what was kept and why, the
 * order number and transaction a verified notification for an unknown order named (and finds it by
 * them), a viewer reads it masked and cannot re-verify, an admin re-verifies a notification for an
 * order registered since, which pays it; in English and in Chinese, with axe-core.
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
    const transactionId = uniqueId('T');
    const early = client.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1234 });
    expect((await client.postWechatpay(early)).status).toBe(404);
    const [forgedId, earlyId] = [await keptId(forged.body), await keptId(early.body)];
    // Only the verified, decrypted one names its order: a forgery's contents are not to be trusted.
    const [named] = await pool.query<
      Array<RowDataPacket & { id: number; order_no: string | null; transaction_id: string | null }>
    >('SELECT id, order_no, transaction_id FROM refused_notification WHERE id IN (?, ?) ORDER BY id', [
      forgedId,
      earlyId,
    ]);
    expect(named.map((r) => [String(r.id), r.order_no, r.transaction_id])).toEqual([
      [forgedId, null, null],
      [earlyId, orderNo, transactionId],
    ]);
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
    await saveScreenshot(viewer, 'refused-en');
    await viewer.getByRole('link', { name: `Open #${forgedId}` }).click();
    await viewer.getByRole('heading', { name: `Refused notification #${forgedId}`, level: 1 }).waitFor();
    await viewer.locator('.facts').getByText('Invalid signature').first().waitFor();
    expect(await viewer.getByRole('button', { name: 'Re-verify' }).isDisabled()).toBe(true);
    await check(viewer, 'viewer detail');
    // Its headers and bytes open in a drawer, masked for a viewer.
    await viewer.getByRole('button', { name: 'Raw bytes' }).click();
    const drawer = viewer.getByRole('dialog', { name: `Refused notification #${forgedId}` });
    await drawer.getByText("The payer's identifiers are masked for a viewer.").waitFor();
    await drawer.getByText('wechatpay-signature:', { exact: false }).first().waitFor();
    await check(viewer, 'viewer drawer');
    await saveScreenshot(viewer, 'refused-drawer-en');
    await drawer.getByRole('button', { name: 'Close' }).click();

    // The verified one for an unknown order names its order and transaction, and is found by either.
    await go(viewer, `#/refused?orderNo=${orderNo}`, 'Refused notifications');
    const byOrder = viewer.getByRole('table', { name: 'Refused notifications' });
    await byOrder.getByRole('link', { name: `Open #${earlyId}` }).waitFor();
    await expect(byOrder.locator('tbody tr').count()).resolves.toBe(1);
    await expect(byOrder.locator('tbody tr').textContent()).resolves.toContain(transactionId);
    await go(viewer, `#/refused?transactionId=${transactionId}`, 'Refused notifications');
    await viewer.getByRole('link', { name: `Open #${earlyId}` }).waitFor();
    await viewer.getByLabel('Order number').fill(orderNo);
    await viewer.getByRole('button', { name: 'Filter' }).click();
    await viewer.waitForURL(new RegExp(`orderNo=${orderNo}`));
    await viewer.getByRole('link', { name: `Open #${earlyId}` }).waitFor();

    // An admin, after registering the order: re-verified, accepted, paid.
    expect((await client.registerOrder({ orderNo, amount: 1234 })).status).toBe(201);
    const admin = await signedIn(platforms.admins.admin);
    await go(admin, `#/refused/${earlyId}`, `Refused notification #${earlyId}`);
    const facts = admin.locator('.facts');
    await facts.getByText('Unknown order').first().waitFor();
    await facts.getByRole('link', { name: orderNo }).waitFor();
    await facts.getByText(transactionId).first().waitFor();
    await admin.getByText('register this order, then re-verify it').waitFor();
    await admin.getByRole('button', { name: 'Re-verify' }).click();
    await admin.getByRole('status').getByText('Accepted: it verified and was settled.').waitFor();
    await facts.locator('.status-accepted').first().waitFor();
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
    await saveScreenshot(admin, 'refused-detail-en');
    // The forged one is refused again, and says so.
    await go(admin, `#/refused/${forgedId}`, `Refused notification #${forgedId}`);
    await admin.getByRole('button', { name: 'Re-verify' }).click();
    await admin.getByRole('status').getByText('Refused again: Invalid signature').waitFor();

    // In Chinese.
    await admin.getByRole('button', { name: '中文' }).click();
    await go(admin, '#/refused', '被拒绝的通知');
    await admin.getByRole('link', { name: `打开 #${earlyId}` }).waitFor();
    await admin.getByText('每渠道、每小时、每类最多保存新通知数').waitFor();
    await check(admin, 'zh list');
    await saveScreenshot(admin, 'refused-zh');
    await go(admin, `#/refused/${forgedId}`, `被拒绝的通知 #${forgedId}`);
    await admin.getByRole('button', { name: '重新验签' }).waitFor();
    await check(admin, 'zh detail');

    expect(violations).toEqual({});
    expect(consoleErrors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
  }, 120_000);
});
