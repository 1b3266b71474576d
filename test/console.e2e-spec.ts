import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { parse } from 'csv-parse/sync';
import { FakePlatform } from '../tools/simulator/fake-platform';
import { CONSOLE_CSP } from '../src/admin/console/serve-console';
import { REGISTERED_CHANNELS } from '../src/channels/registered-channels';
import { AnomalyStatus, AnomalyType } from '../src/payments/anomaly/anomaly.entity';
import { RefundPurpose, RefundStatus } from '../src/refund/refund.entity';
import { OrderStatus } from '../src/order/order-status';
import { REFUSAL_REASONS } from '../src/payments/refused-notification/refused-notification.entity';
import { accessibilityViolations, buildConsole, launchChromium, RunningBrowser } from './support/browser';
import { eventually } from './support/eventually';
import { WebhookReceiver } from './support/webhook-receiver';
import { FakePlatformSuite, startFakePlatformSuite } from './support/fake-platform-suite';
import { count, RunningApp, startApp, TestClient, TestPlatforms, uniqueId } from './support/test-app';

/**
 * The operator console in Debian's Chromium, against the real service, database and the fake
 * platform: operator A finds a duplicate payment and refunds it, operator B approves it in another
 * browser, the platform's signed refund notice settles it. Screenshots of the main pages go to
 * docs/console/ when CONSOLE_SCREENSHOTS=true.
 */
const THRESHOLD = 5000;
const AMOUNT = 8000;
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === 'true' ? join(__dirname, '../docs/console') : undefined;

let suite: FakePlatformSuite;
let platforms: TestPlatforms;
let fake: FakePlatform;
let app: RunningApp;
let client: TestClient;
let pool: Pool;
let chromium: RunningBrowser;
/** Every URL any page asked for, to prove no token ever travels in one. */
const requestedUrls: string[] = [];
/** What the pages' consoles said: a CSP violation shows up here. */
const consoleErrors: string[] = [];

beforeAll(async () => {
  buildConsole();
  // WeChat answers PROCESSING: only the refund notice settles the refund.
  suite = await startFakePlatformSuite({ defaultRefund: 'processing' });
  ({ platforms, fake, pool } = suite);
  app = await suite.startApp({
    ...suite.env,
    REFUND_POLL_INTERVAL_MS: '50',
    REFUND_APPROVAL_THRESHOLD: String(THRESHOLD),
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_SCHEDULE_SECONDS: '0,1',
    WEBHOOK_POLL_INTERVAL_MS: '50',
  });
  client = suite.clientOf(app);
  chromium = await launchChromium();
  if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
});

afterAll(async () => {
  await chromium?.close();
  await suite?.close();
});

async function operatorPage(
  token: string,
  options?: BrowserContextOptions,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await chromium.operator(options);
  await context.addInitScript(RECORD_CANVAS_TEXT);
  const page = await context.newPage();
  page.on('request', (request) => requestedUrls.push(request.url()));
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  await page.goto(`${app.url}/console/`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  return { context, page };
}

/**
 * Keeps every text the page draws on a canvas in `window.drawnText`: uPlot draws its axes there,
 * out of reach of the DOM. Run by the DevTools protocol, before the page's own scripts.
 */
const RECORD_CANVAS_TEXT = `(() => {
  const drawn = (window.drawnText = []);
  const fillText = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
    drawn.push(String(text));
    return fillText.call(this, text, ...rest);
  };
})()`;
const drawnText = (page: Page) => page.evaluate<string[]>('window.drawnText.splice(0)');

async function go(page: Page, hash: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${app.url}/console/${hash}`);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  await page.getByText('Loading…').first().waitFor({ state: 'detached' });
}

async function screenshot(page: Page, name: string): Promise<void> {
  if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/** An order paid twice through signed WeChat notifications: the second transaction is a DUPLICATE_PAYMENT anomaly. */
async function duplicatePayment() {
  const orderNo = uniqueId('CO');
  const paidBy = uniqueId('T');
  const duplicateBy = uniqueId('D');
  expect((await client.registerOrder({ orderNo, amount: AMOUNT })).status).toBe(201);
  for (const transactionId of [paidBy, duplicateBy]) {
    const answer = await client.postWechatpay(
      client.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: AMOUNT }),
    );
    expect(answer.status).toBe(204);
  }
  const [[anomaly]] = await pool.query<RowDataPacket[]>(
    "SELECT id FROM payment_anomaly WHERE transaction_id = ? AND type = 'DUPLICATE_PAYMENT'",
    [duplicateBy],
  );
  return { orderNo, paidBy, duplicateBy, anomalyId: String(anomaly.id) };
}

const refundsOf = (transactionId: string) =>
  pool
    .query<Array<RowDataPacket & { refund_no: string }>>('SELECT * FROM refund WHERE transaction_id = ? ORDER BY id', [
      transactionId,
    ])
    .then(([r]) => r);
const anomalyStatus = async (id: string) =>
  (await pool.query<RowDataPacket[]>('SELECT status FROM payment_anomaly WHERE id = ?', [id]))[0][0].status as string;

describe('the console at /console', () => {
  it('should be served with a strict Content-Security-Policy and only same-origin assets', async () => {
    const page = await fetch(`${app.url}/console/`);
    const html = await page.text();

    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe-inline');
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]).filter((a) => a !== 'data:,');
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) expect(asset).toMatch(/^\/console\/assets\//);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const script = await fetch(app.url + assets.find((a) => a.endsWith('.js'))!);
    expect(script.status).toBe(200);
    expect(script.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${app.url}/console`, { redirect: 'manual' })).headers.get('location')).toBe('/console/');
  });
});

describe('operators in the browser', () => {
  it('should take a duplicate payment from the anomaly to a refund approved by a second admin and settled by the notice', async () => {
    const { orderNo, duplicateBy, anomalyId } = await duplicatePayment();
    const alice = await operatorPage(platforms.admins.admin);
    await alice.page.locator('figure.chart canvas').first().waitFor();
    await screenshot(alice.page, 'overview');

    // A finds the anomaly in the list, filtered by type.
    await go(alice.page, '#/anomalies?type=DUPLICATE_PAYMENT&status=OPEN', 'Anomalies');
    await screenshot(alice.page, 'anomalies');
    await alice.page
      .getByRole('row', { name: new RegExp(duplicateBy) })
      .getByRole('link', { name: anomalyId, exact: true })
      .click();
    await alice.page.getByRole('heading', { name: `Anomaly ${anomalyId}: DUPLICATE_PAYMENT` }).waitFor();
    await expect(alice.page.getByTestId('refundable').textContent()).resolves.toBe('80.00 CNY');
    // The form says what the approval threshold is (REFUND_APPROVAL_THRESHOLD, from the server).
    await expect(alice.page.getByTestId('threshold').textContent()).resolves.toMatch(/threshold or more.*50\.00 CNY/);

    // An emergency refund of the whole duplicate, over the threshold: a reason is required.
    await alice.page.getByRole('button', { name: 'Refund', exact: true }).click();
    await alice.page.getByText('A reason is required.').waitFor();
    expect(await refundsOf(duplicateBy)).toHaveLength(0);
    await alice.page.getByLabel('Reason').fill('customer paid twice (ticket 4711)');
    await screenshot(alice.page, 'anomaly-refund');
    await alice.page.getByRole('button', { name: 'Refund', exact: true }).click();
    await alice.page.getByRole('status').getByText('AWAITING_APPROVAL').waitFor();
    const [asked] = await refundsOf(duplicateBy);
    expect(asked).toMatchObject({
      status: 'AWAITING_APPROVAL',
      requested_by: 'alice',
      amount: AMOUNT,
      order_no: orderNo,
    });
    expect(fake.callsFor(asked.refund_no)).toBe(0);

    // A cannot approve her own refund: the server says no, and the page shows it.
    await go(alice.page, '#/approvals', 'Refund approvals');
    const ownRow = alice.page
      .getByRole('table', { name: 'Waiting for a second admin' })
      .getByRole('row', { name: new RegExp(asked.refund_no) });
    // Approving asks first: the amount and the threshold, in a modal dialog; Cancel sends nothing.
    const auditedBefore = await count(pool, 'SELECT COALESCE(MAX(id), 0) FROM admin_audit');
    await ownRow.getByRole('button', { name: 'Approve' }).click();
    const confirm = alice.page.getByRole('dialog', { name: 'Confirm the approval' });
    await expect(confirm.getByTestId('confirm-amount').textContent()).resolves.toBe('80.00 CNY');
    await expect(confirm.getByTestId('confirm-threshold').textContent()).resolves.toMatch(/^\s*50\.00 CNY\s*$/);
    await expect(
      confirm
        .getByRole('button', { name: 'Cancel' })
        .evaluate((b: { ownerDocument: { activeElement: unknown } }) => b === b.ownerDocument.activeElement),
    ).resolves.toBe(true);
    await alice.page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    expect(await count(pool, 'SELECT COUNT(*) FROM admin_audit WHERE id > ?', [auditedBefore])).toBe(0);
    await ownRow.getByRole('button', { name: 'Approve' }).click();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect(await count(pool, 'SELECT COUNT(*) FROM admin_audit WHERE id > ?', [auditedBefore])).toBe(0);
    await ownRow.getByRole('button', { name: 'Approve' }).click();
    await confirm.getByRole('button', { name: 'Approve' }).click();
    await ownRow.getByRole('alert').waitFor();
    expect((await refundsOf(duplicateBy))[0].status).toBe('AWAITING_APPROVAL');

    // B, in another browser context, approves it: the channel is called once.
    const bob = await operatorPage(platforms.admins.admin2);
    await go(bob.page, '#/approvals', 'Refund approvals');
    await screenshot(bob.page, 'approvals');
    const queue = bob.page.getByRole('table', { name: 'Waiting for a second admin' });
    await queue
      .getByRole('row', { name: new RegExp(asked.refund_no) })
      .getByRole('button', { name: 'Approve' })
      .click();
    const bobConfirms = bob.page.getByRole('dialog', { name: 'Confirm the approval' });
    await bobConfirms.getByText('alice').waitFor();
    await screenshot(bob.page, 'approval-confirm');
    await bobConfirms.getByRole('button', { name: 'Approve' }).click();
    await queue.getByRole('row', { name: new RegExp(asked.refund_no) }).waitFor({ state: 'detached' });
    const decided = bob.page
      .getByRole('table', { name: 'Recent decisions' })
      .getByRole('row', { name: new RegExp(asked.refund_no) });
    await expect(decided.textContent()).resolves.toMatch(/alice.*bob/);
    await eventually(
      'the channel to accept the refund',
      async () => (await refundsOf(duplicateBy))[0].status === 'PROCESSING',
      15_000,
    );
    const [approved] = await refundsOf(duplicateBy);
    expect(approved).toMatchObject({ reviewed_by: 'bob' });
    expect(fake.callsFor(asked.refund_no)).toBe(1);

    // The fake platform's signed refund notice settles it, and the anomaly with it.
    const notice = client.wechatpayRefundNotice({
      outTradeNo: orderNo,
      transactionId: duplicateBy,
      outRefundNo: asked.refund_no,
      refundId: String(approved.channel_refund_id),
      total: AMOUNT,
      refund: AMOUNT,
    });
    expect((await client.postWechatpay(notice)).status).toBe(204);
    expect((await refundsOf(duplicateBy))[0].status).toBe('SUCCEEDED');
    expect(await anomalyStatus(anomalyId)).toBe('RESOLVED');

    await go(alice.page, `#/anomalies/${anomalyId}`, `Anomaly ${anomalyId}: DUPLICATE_PAYMENT`);
    await alice.page.getByRole('definition').getByText('RESOLVED', { exact: true }).waitFor();
    const refundRow = alice.page.getByRole('row', { name: new RegExp(asked.refund_no) });
    await refundRow.getByText('SUCCEEDED').waitFor();
    await expect(refundRow.textContent()).resolves.toMatch(/alice.*bob/);
    await expect(alice.page.getByTestId('refundable').textContent()).resolves.toBe('0.00 CNY');
    await screenshot(alice.page, 'anomaly-resolved');

    // Exactly one refund, one channel call, one of each audit row.
    expect(await refundsOf(duplicateBy)).toHaveLength(1);
    expect(fake.callsFor(asked.refund_no)).toBe(1);
    const [audits] = await pool.query<RowDataPacket[]>(
      'SELECT operator_id, action FROM admin_audit WHERE target IN (?, ?) ORDER BY id',
      [`order:${orderNo}`, `refund:${asked.refund_no}`],
    );
    expect(audits.map((a) => `${a.operator_id} ${a.action}`)).toEqual([
      'alice EMERGENCY_REFUND',
      // Her attempt to approve her own refund, refused, is audited too (issue 35, item 7).
      'alice REFUND_APPROVE_REFUSED',
      'bob REFUND_APPROVED',
    ]);

    // The order view: status history, deliveries with their raw bytes.
    await go(alice.page, `#/orders/${orderNo}`, `Order ${orderNo}`);
    await alice.page
      .getByRole('button', { name: /^Raw bytes #/ })
      .first()
      .click();
    await alice.page.getByText('wechatpay-signature:').first().waitFor();
    // The admin opens the WeChat Pay resource decrypted: the payer's openid as sent, and the read audited.
    await alice.page.getByText('Decrypted resource').first().click();
    await expect(alice.page.getByTestId('decrypted').first().textContent()).resolves.toContain(
      '"openid": "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o"',
    );
    await screenshot(alice.page, 'order');
    expect(
      await count(
        pool,
        "SELECT COUNT(*) FROM admin_audit WHERE operator_id = 'alice' AND action = 'RESOURCE_READ_DECRYPTED'",
      ),
    ).toBeGreaterThanOrEqual(1);

    await alice.context.close();
    await bob.context.close();
  });

  it('should close an anomaly without a refund: resolved by one admin, approved by another above the threshold', async () => {
    const { duplicateBy, anomalyId } = await duplicatePayment();
    const alice = await operatorPage(platforms.admins.admin);
    await go(alice.page, `#/anomalies/${anomalyId}`, `Anomaly ${anomalyId}: DUPLICATE_PAYMENT`);

    // A note is required; DUPLICATE_OF needs a reference, and the server's refusal is shown.
    await alice.page.getByRole('button', { name: 'Resolve', exact: true }).click();
    await alice.page.getByText('A note is required.').waitFor();
    await alice.page.getByLabel('Closed as').selectOption('DUPLICATE_OF');
    await alice.page.getByLabel('Note').fill('the customer was charged once by the bank');
    await alice.page.getByRole('button', { name: 'Resolve', exact: true }).click();
    await alice.page.getByText('reference is required for DUPLICATE_OF').waitFor();
    await alice.page.getByLabel('Closed as').selectOption('REFUNDED_OUTSIDE');
    await alice.page.getByLabel('Reference').fill('BANK-4711');
    await alice.page.getByRole('button', { name: 'Resolve', exact: true }).click();

    // 80.00 is over the threshold: it waits for a second admin, and the refund form is gone.
    const resolution = alice.page.getByRole('region', { name: 'Resolution' });
    await resolution.getByText('AWAITING_APPROVAL').waitFor();
    expect(await alice.page.getByRole('button', { name: 'Refund', exact: true }).count()).toBe(0);
    await resolution.getByRole('button', { name: 'Approve resolution' }).click();
    await resolution.getByRole('alert').getByText('cannot approve it; another admin must').waitFor();
    await screenshot(alice.page, 'anomaly-resolution');

    const bob = await operatorPage(platforms.admins.admin2);
    await go(bob.page, `#/anomalies/${anomalyId}`, `Anomaly ${anomalyId}: DUPLICATE_PAYMENT`);
    await bob.page.getByRole('button', { name: 'Approve resolution' }).click();
    await bob.page.getByRole('definition').getByText('RESOLVED', { exact: true }).waitFor();
    await bob.page.getByRole('region', { name: 'Resolution' }).getByText('APPLIED').waitFor();
    const decisions = bob.page.getByRole('table', { name: 'Decisions' });
    await decisions.getByRole('row', { name: /bob ANOMALY_RESOLUTION_APPROVED/ }).waitFor();
    await decisions.getByRole('row', { name: /alice ANOMALY_RESOLUTION_REQUESTED/ }).waitFor();

    const [[row]] = await pool.query<RowDataPacket[]>('SELECT * FROM payment_anomaly WHERE id = ?', [anomalyId]);
    expect(row).toMatchObject({
      status: 'RESOLVED',
      resolution_status: 'APPLIED',
      resolution_reason: 'REFUNDED_OUTSIDE',
      resolution_reference: 'BANK-4711',
      resolution_requested_by: 'alice',
      resolution_reviewed_by: 'bob',
    });
    expect(await refundsOf(duplicateBy)).toHaveLength(0);
    const [audits] = await pool.query<RowDataPacket[]>(
      'SELECT operator_id, action FROM admin_audit WHERE target = ? ORDER BY id',
      [`anomaly:${anomalyId}`],
    );
    expect(audits.map((a) => `${a.operator_id} ${a.action}`)).toEqual([
      'alice ANOMALY_RESOLVE_REFUSED',
      'alice ANOMALY_RESOLUTION_REQUESTED',
      'alice ANOMALY_RESOLUTION_APPROVE_REFUSED',
      'bob ANOMALY_RESOLUTION_APPROVED',
    ]);
    await alice.context.close();
    await bob.context.close();
  });

  it('should find an order by a transaction id', async () => {
    const { orderNo, duplicateBy } = await duplicatePayment();
    const { context, page } = await operatorPage(platforms.admins.viewer);
    await go(page, '#/orders', 'Orders');
    await page.getByLabel('Order number or transaction id').fill(duplicateBy);
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('heading', { name: `Order ${orderNo}` }).waitFor();
    await context.close();
  });

  it('should let a viewer see but not refund: disabled controls, and the server refuses regardless', async () => {
    const { orderNo, duplicateBy, anomalyId } = await duplicatePayment();
    // The run's database is shared by every suite, whose viewers are all called victor: this journey's rows only.
    const auditedBefore = await count(pool, 'SELECT COALESCE(MAX(id), 0) FROM admin_audit');
    const { context, page } = await operatorPage(platforms.admins.viewer);

    await go(page, `#/anomalies/${anomalyId}`, `Anomaly ${anomalyId}: DUPLICATE_PAYMENT`);
    await page.getByText('Viewer: you can see everything and change nothing.').waitFor();
    expect(await page.getByRole('button', { name: 'Refund', exact: true }).isDisabled()).toBe(true);
    expect(await page.getByLabel('Reason').isDisabled()).toBe(true);
    expect(await page.getByLabel(/^Amount/).isDisabled()).toBe(true);

    // The same call the form would make, with the token this tab holds.
    const status = await page.evaluate(
      async ({ orderNo, transactionId }) => {
        const tabToken = () =>
          (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }).sessionStorage.getItem(
            'pcs-console-token',
          );
        const response = await fetch('/admin/refunds/emergency', {
          method: 'POST',
          headers: {
            authorization: `Bearer ${tabToken()}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify({ orderNo, transactionId, amount: 100, reason: 'viewer tries' }),
        });
        return response.status;
      },
      { orderNo, transactionId: duplicateBy },
    );
    expect(status).toBe(403);
    expect(await refundsOf(duplicateBy)).toHaveLength(0);
    // Issue 35, item 7: the refused attempt is audited, and nothing else of victor's.
    expect(
      await count(pool, "SELECT COUNT(*) FROM admin_audit WHERE operator_id = 'victor' AND id > ?", [auditedBefore]),
    ).toBe(1);
    expect(
      await count(
        pool,
        "SELECT COUNT(*) FROM admin_audit WHERE operator_id = 'victor' AND id > ? AND action NOT LIKE '%_REFUSED'",
        [auditedBefore],
      ),
    ).toBe(0);

    // The decrypted WeChat Pay resource, for a viewer: the payer's openid masked, nothing audited.
    await go(page, `#/orders/${orderNo}`, `Order ${orderNo}`);
    await page
      .getByRole('button', { name: /^Raw bytes #/ })
      .first()
      .click();
    await page.getByText('Decrypted resource').first().click();
    const decrypted = await page.getByTestId('decrypted').first().textContent();
    expect(decrypted).toContain('"openid": "oU************************6o"');
    expect(decrypted).not.toContain('oUpF8uMuAJO_M2pxb1Q9zNjWeS6o');
    await page.getByText("Viewer: the payer's identifiers are masked.").first().waitFor();
    expect(
      await count(pool, "SELECT COUNT(*) FROM admin_audit WHERE operator_id = 'victor' AND id > ?", [auditedBefore]),
    ).toBe(1);

    await go(page, '#/approvals', 'Refund approvals');
    for (const button of await page.getByRole('button', { name: /^(Approve|Reject)$/ }).all()) {
      expect(await button.isDisabled()).toBe(true);
    }
    await context.close();
  });

  it('should pass axe-core on every page, in English and in Chinese, without a CSP violation', async () => {
    const { orderNo, anomalyId } = await duplicatePayment();
    const context = await chromium.operator();
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    await page.goto(`${app.url}/console/`);
    await page.getByLabel('Admin token').waitFor();
    const violations: Record<string, unknown> = {};
    const check = async (name: string) => {
      const found = await accessibilityViolations(page);
      if (found.length > 0) violations[name] = found;
    };
    await check('sign-in');
    await page.getByLabel('Admin token').fill(platforms.admins.admin);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page.getByText('Loading…').first().waitFor({ state: 'detached' });

    const pages: Array<[string, string | RegExp]> = [
      ['#/', 'Overview'],
      ['#/anomalies', 'Anomalies'],
      [`#/anomalies/${anomalyId}`, /^Anomaly /],
      ['#/approvals', 'Refund approvals'],
      ['#/refunds', 'Refunds'],
      ['#/orders', 'Orders'],
      ['#/orders?channel=WECHATPAY&status=PAID', 'Orders'],
      [`#/orders/${orderNo}`, `Order ${orderNo}`],
      ['#/reconciliation', 'Reconciliation'],
      ['#/reconciliation/WECHATPAY/2026-11-01', 'Reconciliation WECHATPAY 01/11/2026'],
      ['#/dead-letters', 'Dead letters'],
    ];
    for (const [hash, heading] of pages) {
      await go(page, hash, heading);
      await check(hash);
    }
    await go(page, '#/reconciliation', 'Reconciliation');
    await screenshot(page, 'reconciliation');
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('heading', { name: '对账', level: 1 }).waitFor();
    await go(page, '#/', '概览');
    await check('zh #/');
    await screenshot(page, 'overview-zh');
    await go(page, `#/anomalies/${anomalyId}`, /^异常 /);
    await check('zh anomaly');
    for (const [hash, heading] of [
      ['#/approvals', '退款审批'],
      ['#/refunds', '退款'],
      ['#/orders?channel=WECHATPAY', '订单'],
      [`#/orders/${orderNo}`, `订单 ${orderNo}`],
      ['#/dead-letters', '死信'],
    ]) {
      await go(page, hash, heading);
      await check(`zh ${hash}`);
    }

    expect(violations).toEqual({});
    expect(consoleErrors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
    await context.close();
  });

  it("should show a webhook endpoint's attempts, recover what failed and resend, in English and in Chinese", async () => {
    const receiver = new WebhookReceiver();
    await receiver.start();
    try {
      receiver.behaviour = () => ({ status: 503, body: 'receiver down for maintenance' });
      const created = await client.admin('POST', '/admin/webhook-endpoints', platforms.admins.admin, {
        url: receiver.url,
        description: 'shop',
      });
      expect(created.status).toBe(201);
      const endpoint = created.json<{ id: string; secret: string }>();
      receiver.secrets = [endpoint.secret];
      const { orderNo } = await duplicatePayment();
      await eventually(
        'the message to fail its two attempts',
        async () =>
          (await count(pool, "SELECT COUNT(*) FROM webhook_delivery WHERE endpoint_id = ? AND status = 'FAILED'", [
            endpoint.id,
          ])) === 1,
        15_000,
      );

      const { context, page } = await operatorPage(platforms.admins.admin);
      const violations: Record<string, unknown> = {};
      const check = async (name: string) => {
        const found = await accessibilityViolations(page);
        if (found.length > 0) violations[name] = found;
      };
      await go(page, '#/webhooks', 'Webhooks');
      await check('#/webhooks');
      await page.getByRole('link', { name: `${endpoint.id} · shop` }).click();
      await page.getByRole('heading', { name: `Webhook endpoint ${endpoint.id}`, level: 1 }).waitFor();
      await page.getByText('Loading…').first().waitFor({ state: 'detached' });
      await check('#/webhooks/:id');
      const rows = page.getByRole('table', { name: 'Attempts, newest first' }).getByRole('row');
      await expect(rows.filter({ hasText: orderNo }).filter({ hasText: '503' }).count()).resolves.toBe(2);
      await expect(page.getByText('receiver down for maintenance').count()).resolves.toBe(2);

      receiver.behaviour = () => ({ status: 204 });
      await page.getByLabel('Send again what failed since').fill('2000-01-01T00:00');
      await page.getByRole('button', { name: 'Recover' }).click();
      await page.getByText('Queued: 1').waitFor();
      await eventually('the recovered message to be accepted', () => receiver.accepted().length === 1, 10_000);

      const [eventId] = [...receiver.acceptedIds()];
      await page.getByLabel('Event id').fill(eventId);
      await page.getByRole('button', { name: 'Resend' }).click();
      await page.getByRole('status').filter({ hasText: 'Queued' }).first().waitFor();
      await eventually('the resent message to be accepted', () => receiver.accepted().length === 2, 10_000);
      expect(receiver.repeatedAttempts()).toEqual([]);

      await page.getByRole('button', { name: '中文' }).click();
      await page.getByRole('heading', { name: `Webhook 端点 ${endpoint.id}`, level: 1 }).waitFor();
      await check('zh #/webhooks/:id');
      await page.getByRole('button', { name: 'English' }).click();
      await page.getByRole('heading', { name: `Webhook endpoint ${endpoint.id}`, level: 1 }).waitFor();
      expect(violations).toEqual({});

      const [audit] = await pool.query<Array<RowDataPacket & { operator_id: string; action: string }>>(
        'SELECT operator_id, action FROM admin_audit WHERE target = ? ORDER BY id',
        [`webhook-endpoint:${endpoint.id}`],
      );
      expect(audit.map((a) => [a.operator_id, a.action])).toEqual([
        ['alice', 'WEBHOOK_ENDPOINT_CREATED'],
        ['alice', 'WEBHOOK_RECOVERED'],
        ['alice', 'WEBHOOK_RESENT'],
      ]);
      await client.admin('DELETE', `/admin/webhook-endpoints/${endpoint.id}`, platforms.admins.admin);
      await context.close();
    } finally {
      await receiver.stop();
    }
  });

  it("should offer the API's channels, anomaly types and refund statuses as filters, a linked filter selected", async () => {
    const { context, page } = await operatorPage(platforms.admins.viewer);
    // Each select's options after its first, "Any": the values, shown as they are.
    const offered = async (select: string) => (await page.locator(`#${select} option`).allTextContents()).slice(1);

    await go(page, '#/anomalies?channel=UNIONPAY&type=MERCHANT_MISMATCH', 'Anomalies');

    expect(await offered('channel')).toEqual([...REGISTERED_CHANNELS]);
    expect(await offered('channel')).toContain('UNIONPAY');
    expect(await offered('type')).toEqual(Object.values(AnomalyType));
    expect(await offered('type')).toEqual(expect.arrayContaining(['MERCHANT_MISMATCH', 'MALFORMED_NOTIFICATION']));
    expect(await offered('status')).toEqual(Object.values(AnomalyStatus));
    expect(await page.locator('#channel').inputValue()).toBe('UNIONPAY');
    expect(await page.locator('#type').inputValue()).toBe('MERCHANT_MISMATCH');

    await go(page, '#/refunds', 'Refunds');
    const chips = page.getByRole('navigation', { name: 'Status' }).getByRole('link');
    await chips.getByText('REJECTED', { exact: true }).waitFor();
    expect(await chips.allTextContents()).toEqual(['Any', ...Object.values(RefundStatus)]);
    await context.close();
  });

  it('should list orders by status and channel, and export what the filters select as CSV', async () => {
    const { orderNo, paidBy } = await duplicatePayment();
    const { context, page } = await operatorPage(platforms.admins.viewer);
    await go(page, '#/orders', 'Orders');

    expect((await page.locator('#status option').allTextContents()).slice(1)).toEqual(Object.values(OrderStatus));
    // An en-GB browser: its date fields day first, as its moments are.
    await page.getByLabel('From (UTC) (dd/mm/yyyy)').waitFor();
    expect((await page.locator('#channel option').allTextContents()).slice(1)).toEqual([...REGISTERED_CHANNELS]);
    await page.locator('#status').selectOption('PAID');
    await page.locator('#channel').selectOption('WECHATPAY');
    await page.getByRole('button', { name: 'Filter' }).click();
    const table = page.getByRole('table', { name: 'Orders, newest first' });
    const row = table.getByRole('row', { name: new RegExp(orderNo) });
    await row.waitFor();
    expect(page.url()).toContain('#/orders?status=PAID&channel=WECHATPAY');
    await expect(row.textContent()).resolves.toContain(paidBy);
    await expect(row.textContent()).resolves.toContain('80.00 CNY');
    const listed = await table.locator('tbody tr').count();
    await expect(table.locator('tbody .status').allTextContents()).resolves.toEqual(Array(listed).fill('PAID'));

    const [file] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    expect(file.suggestedFilename()).toMatch(/^orders-\d{8}T\d{6}Z\.csv$/);
    const rows = parse<Record<string, string>>(readFileSync(await file.path()), { bom: true, columns: true });
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows.every((r) => r.status === 'PAID' && r.channel === 'WECHATPAY')).toBe(true);
    expect(rows.find((r) => r.order_no === orderNo)).toMatchObject({
      transaction_id: paidBy,
      amount_minor: String(AMOUNT),
      amount: '80.00',
      currency: 'CNY',
    });
    await page.getByRole('status').getByText(file.suggestedFilename()).waitFor();
    await screenshot(page, 'orders');
    await context.close();
  });

  it("should write every moment the one way, Beijing time beside it, and the charts' axes in the operator's language", async () => {
    const { anomalyId } = await duplicatePayment();
    const { context, page } = await operatorPage(platforms.admins.admin, {
      locale: 'en-US',
      timezoneId: 'America/New_York',
    });
    const ticks = async () => {
      await page.locator('figure.chart canvas').first().waitFor();
      return (await drawnText(page)).filter((text) => /\d/.test(text) && !/^[\d.,]+%?$/.test(text));
    };

    // The overview: a chart per channel and per outcome, their time axes in 24 h, never uPlot's `12/4/26` or `6am`.
    await go(page, '#/', 'Overview');
    const english = await ticks();
    expect(english.length).toBeGreaterThan(0);
    for (const tick of english) expect(tick).toMatch(/^(\d{2}\/\d{2}, )?\d{2}:\d{2}$/);
    const legends = page.locator('figure.chart');
    await expect(legends.nth(0).locator('.u-legend .u-label').allTextContents()).resolves.toEqual(
      expect.arrayContaining([...REGISTERED_CHANNELS]),
    );
    await expect(legends.nth(1).locator('.u-legend .u-label').allTextContents()).resolves.toEqual(
      expect.arrayContaining(['PAID', 'DUPLICATE_PAYMENT']),
    );
    await expect(page.locator('figure.chart figcaption').allTextContents()).resolves.toEqual([
      'Deliveries per hour by channel (last 24 h)',
      'Deliveries per hour by outcome (last 24 h)',
      'Duplicate rate per hour by channel (%)',
    ]);
    // p50 of whole milliseconds: 0 is under one, never "0 ms".
    const { p50Ms } = (await client.admin('GET', '/admin/overview', platforms.admins.viewer)).json<{
      latency: { p50Ms: number };
    }>().latency;
    const p50 = await page.getByTestId('p50').textContent();
    expect(p50).not.toBe('0 ms');
    expect(p50).toBe(p50Ms === 0 ? '<1 ms' : `${p50Ms} ms`);

    // A moment: the browser's locale (month first, as its date inputs are) and zone, Beijing time beside it.
    await go(page, `#/anomalies/${anomalyId}`, `Anomaly ${anomalyId}: DUPLICATE_PAYMENT`);
    const created = page.getByRole('definition').locator('.time').first();
    const iso = (await created.locator('time').getAttribute('datetime'))!;
    const beijingHour = String((new Date(iso).getUTCHours() + 8) % 24).padStart(2, '0');
    expect(await created.textContent()).toMatch(
      new RegExp(
        `^\\d{2}/\\d{2}/\\d{4}, \\d{2}:\\d{2}:\\d{2} (EST|GMT-5) Beijing time \\d{2}/\\d{2}/\\d{4}, ${beijingHour}:\\d{2}:\\d{2}$`,
      ),
    );
    await go(page, '#/anomalies', 'Anomalies');
    // The date filters are written and read the same way (not the browser's own date input, whose
    // format follows its UI language, not the page's locale): month first here.
    const from = page.getByLabel('From (UTC) (mm/dd/yyyy)');
    await from.fill('31/12/2026');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('alert').getByText('Enter the date as mm/dd/yyyy: 31/12/2026').waitFor();
    await from.fill('12/01/2026');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/#\/anomalies\?from=2026-12-01/);
    await page.getByText('Loading…').first().waitFor({ state: 'detached' });
    expect(await page.getByLabel('From (UTC) (mm/dd/yyyy)').inputValue()).toBe('12/01/2026');
    await go(page, '#/anomalies', 'Anomalies');
    const listed = page.locator('tbody .time').first();
    expect(await listed.textContent()).toMatch(/^\d{2}\/\d{2}\/\d{4}, \d{2}:\d{2}:\d{2} (EST|GMT-5) Beijing time /);

    // The same in Chinese: year first, the axes as well.
    await page.getByRole('button', { name: '中文' }).click();
    await go(page, '#/', '概览');
    const chinese = await ticks();
    expect(chinese.length).toBeGreaterThan(0);
    for (const tick of chinese) expect(tick).toMatch(/^(\d{2}\/\d{2} )?\d{2}:\d{2}$/);
    await go(page, '#/orders?from=2026-12-01', '订单');
    expect(await page.getByLabel('开始 (UTC) (yyyy/mm/dd)').inputValue()).toBe('2026/12/01');
    await go(page, `#/anomalies/${anomalyId}`, /^异常 /);
    expect(await page.getByRole('definition').locator('.time').first().textContent()).toMatch(
      new RegExp(
        `^\\d{4}/\\d{2}/\\d{2} (GMT-5|EST) \\d{2}:\\d{2}:\\d{2} 北京时间 \\d{4}/\\d{2}/\\d{2} ${beijingHour}:`,
      ),
    );
    await page.getByRole('button', { name: 'English' }).click();
    await context.close();
  });

  it('should keep badges, ids and links on one line at 1,440 px, and pass axe with the approval dialog open', async () => {
    const { orderNo, duplicateBy } = await duplicatePayment();
    const asked = await client.admin('POST', '/admin/refunds/emergency', platforms.admins.admin, {
      orderNo,
      transactionId: duplicateBy,
      amount: AMOUNT,
      reason: 'paid twice',
    });
    expect(asked.json<{ status: string }>().status).toBe('AWAITING_APPROVAL');
    const { context, page } = await operatorPage(platforms.admins.admin2, { viewport: { width: 1440, height: 900 } });
    /** Single tokens on more than one line (a rect per text node, so lines are told by their tops): broken inside. */
    const broken = () =>
      page.evaluate<
        string[]
      >(`[...document.querySelectorAll('main .status, main td a, main .money, main .time time, main .time small')]
        .filter((e) => new Set([...e.getClientRects()].map((r) => Math.round(r.top))).size > 1)
        .map((e) => e.textContent)`);
    for (const [hash, heading] of [
      ['#/approvals', 'Refund approvals'],
      ['#/refunds', 'Refunds'],
      ['#/orders', 'Orders'],
      ['#/anomalies', 'Anomalies'],
      [`#/orders/${orderNo}`, `Order ${orderNo}`],
    ]) {
      await go(page, hash, heading);
      expect({ hash, broken: await broken() }).toEqual({ hash, broken: [] });
    }
    await go(page, '#/approvals', 'Refund approvals');
    // The badge the team saw broken (AWAITING_APPRO VAL) is there, on one line.
    const badgeLines = `[...document.querySelectorAll('.status-awaiting_approval')]
      .map((e) => new Set([...e.getClientRects()].map((r) => Math.round(r.top))).size)`;
    const lines = await page.evaluate<number[]>(badgeLines);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((n) => n === 1)).toBe(true);

    const violations: Record<string, unknown> = {};
    const row = page.getByRole('row', { name: new RegExp(duplicateBy) }).first();
    await row.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('dialog', { name: 'Confirm the approval' }).waitFor();
    const found = await accessibilityViolations(page);
    if (found.length > 0) violations.dialog = found;
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: '中文' }).click();
    await go(page, '#/approvals', '退款审批');
    await page
      .getByRole('row', { name: new RegExp(duplicateBy) })
      .first()
      .getByRole('button', { name: '批准' })
      .click();
    const zh = page.getByRole('dialog', { name: '确认批准' });
    await expect(zh.getByTestId('confirm-amount').textContent()).resolves.toBe('80.00 CNY');
    const foundZh = await accessibilityViolations(page);
    if (foundZh.length > 0) violations['zh dialog'] = foundZh;
    await zh.getByRole('button', { name: '取消' }).click();
    await page.getByRole('button', { name: 'English' }).click();

    expect(violations).toEqual({});
    expect(
      await count(pool, "SELECT COUNT(*) FROM refund WHERE transaction_id = ? AND status = 'AWAITING_APPROVAL'", [
        duplicateBy,
      ]),
    ).toBe(1);
    await context.close();
  });

  it('should never put a token in a URL', () => {
    const tokens = Object.values(platforms.admins);
    expect(requestedUrls.length).toBeGreaterThan(10);
    for (const url of requestedUrls) for (const token of tokens) expect(url).not.toContain(token);
  });
});

describe('the admin endpoints the console reads', () => {
  const read = (path: string, token = platforms.admins.viewer) => client.admin('GET', path, token);

  it('should tell who the token belongs to, and refuse no token', async () => {
    expect((await read('/admin/me')).json()).toEqual({ operatorId: 'victor', role: 'viewer' });
    expect((await read('/admin/me', platforms.admins.admin2)).json()).toEqual({ operatorId: 'bob', role: 'admin' });
    expect((await client.admin('GET', '/admin/me', undefined)).status).toBe(401);
    expect((await client.admin('GET', '/admin/overview', undefined)).status).toBe(401);
  });

  it('should give the lists the filters offer, from their registries, and refuse no token', async () => {
    expect((await read('/admin/vocabulary')).json()).toEqual({
      channels: [...REGISTERED_CHANNELS],
      anomalyTypes: Object.values(AnomalyType),
      anomalyStatuses: Object.values(AnomalyStatus),
      refundPurposes: Object.values(RefundPurpose),
      refundStatuses: Object.values(RefundStatus),
      orderStatuses: Object.values(OrderStatus),
      refundApprovalThreshold: THRESHOLD,
      refusalReasons: REFUSAL_REASONS,
    });
    expect((await client.admin('GET', '/admin/vocabulary', undefined)).status).toBe(401);
  });

  it('should give the overview figures the database holds', async () => {
    await duplicatePayment();
    const answer = await read('/admin/overview');
    const overview = answer.json<{
      latency: { from: string; deliveries: number; p50Ms: number; p99Ms: number };
      openAnomalies: Array<{ key: string; count: number }>;
      refundsAwaitingApproval: number;
      deadLetters: number;
      spool: { enabled: boolean };
    }>();

    expect(answer.status).toBe(200);
    const [open] = await pool.query<Array<RowDataPacket & { type: string }>>(
      "SELECT type, COUNT(*) AS n FROM payment_anomaly WHERE status <> 'RESOLVED' GROUP BY type ORDER BY type",
    );
    expect(overview.openAnomalies).toEqual(open.map((r) => ({ key: r.type, count: Number(r.n) })));
    expect(overview.openAnomalies.map((a) => a.key)).toContain('DUPLICATE_PAYMENT');
    expect(overview.refundsAwaitingApproval).toBe(
      await count(pool, "SELECT COUNT(*) FROM refund WHERE status = 'AWAITING_APPROVAL'"),
    );
    expect(overview.latency.deliveries).toBe(
      await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE processing_ms IS NOT NULL AND received_at >= ?', [
        new Date(overview.latency.from),
      ]),
    );
    expect(overview.latency.p50Ms).toBeLessThanOrEqual(overview.latency.p99Ms);
    expect(overview.latency.p99Ms).toBeLessThanOrEqual(
      await count(pool, 'SELECT MAX(processing_ms) FROM callback_delivery'),
    );
    expect(overview.deadLetters).toBe(
      (await count(pool, 'SELECT COUNT(*) FROM outbox_event WHERE dead_lettered_at IS NOT NULL')) +
        (await count(pool, 'SELECT COUNT(*) FROM handler_retry WHERE dead_lettered_at IS NOT NULL')),
    );
    expect(overview.spool).toEqual({ enabled: false });
  });

  it('should give one anomaly, and the order of a transaction', async () => {
    const { orderNo, paidBy, duplicateBy, anomalyId } = await duplicatePayment();

    expect((await read(`/admin/anomalies/${anomalyId}`)).json()).toMatchObject({
      id: anomalyId,
      type: 'DUPLICATE_PAYMENT',
      orderNo,
      transactionId: duplicateBy,
      paidAmount: AMOUNT,
    });
    expect((await read(`/admin/transactions/${paidBy}`)).json()).toEqual({ orderNo, channel: 'WECHATPAY' });
    expect((await read(`/admin/transactions/${duplicateBy}`)).json()).toEqual({ orderNo, channel: 'WECHATPAY' });
    expect((await read('/admin/anomalies/999999999')).status).toBe(404);
    expect((await read('/admin/anomalies/x')).status).toBe(404);
    expect((await read('/admin/transactions/nobody-paid-this')).status).toBe(404);
    // Other suites share the run's database: the filter is shown by what it keeps and what it leaves out.
    type Listed = { items: Array<{ id: string; channel: string }> };
    const alipay = (await read(`/admin/anomalies?channel=ALIPAY&type=DUPLICATE_PAYMENT`)).json<Listed>().items;
    expect(alipay.every((a) => a.channel === 'ALIPAY')).toBe(true);
    expect(alipay.map((a) => a.id)).not.toContain(anomalyId);
    const wechatpay = (await read(`/admin/anomalies?channel=WECHATPAY&type=DUPLICATE_PAYMENT`)).json<Listed>().items;
    expect(wechatpay.every((a) => a.channel === 'WECHATPAY')).toBe(true);
    expect(wechatpay.map((a) => a.id)).toContain(anomalyId);
    expect((await read('/admin/anomalies?channel=PAYPAL')).status).toBe(400);
  });
});

describe('CONSOLE=false', () => {
  it('should answer 404 at /console', async () => {
    const off = await startApp({ ...platforms.env, CONSOLE: 'false' });
    try {
      expect((await fetch(`${off.url}/console/`)).status).toBe(404);
      expect((await fetch(`${off.url}/console`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
