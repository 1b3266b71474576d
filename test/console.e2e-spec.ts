import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { BrowserContext, BrowserContextOptions, Locator, Page } from 'playwright-core';
import { parse } from 'csv-parse/sync';
import { FakePlatform } from '../tools/simulator/fake-platform';
import {
  alipayDelivery,
  alipayTradeParams,
  generateCertificate,
  generateRsaKeyPair,
} from '../tools/simulator/platform-signers';
import { CONSOLE_CSP } from '../src/admin/console/serve-console';
import { REGISTERED_CHANNELS } from '../src/channels/registered-channels';
import { AnomalyStatus, AnomalyType } from '../src/payments/anomaly/anomaly.entity';
import { RefundPurpose, RefundStatus } from '../src/refund/refund.entity';
import { OrderStatus } from '../src/order/order-status';
import { VOCABULARY_LISTS } from '../src/admin/vocabulary.controller';
import { REFUSAL_REASONS } from '../src/payments/refused-notification/refused-notification.entity';
import { CODE_LABELS } from '../console/src/catalogue';
import {
  accessibilityViolations,
  buildConsole,
  launchChromium,
  RunningBrowser,
  saveScreenshot,
  tablesFit,
  untranslatedCodes,
} from './support/browser';
import { eventually } from './support/eventually';
import { WebhookReceiver } from './support/webhook-receiver';
import { createWechatpayAccount, WechatpayTestAccount } from './support/merchant-accounts';
import { FakePlatformSuite, startFakePlatformSuite } from './support/fake-platform-suite';
import { count, RunningApp, startApp, TestClient, TestPlatforms, uniqueId } from './support/test-app';

/**
 * The operator console in Debian's Chromium, against the real service, database and the fake
 * platform: operator A finds a duplicate payment and refunds it, operator B approves it in another
 * browser (or rejects it), the platform's signed refund notice settles it; every page in both
 * languages at 1,280 and 1,440 px. Screenshots of every page go to test-output/console-screenshots/,
 * and the ones the docs show to docs/console/ as well when CONSOLE_SCREENSHOTS=true.
 */
const THRESHOLD = 5000;
const AMOUNT = 8000;
const DOCS = process.env.CONSOLE_SCREENSHOTS === 'true' ? join(__dirname, '../docs/console') : undefined;
/** The code a label stands for, in English: what a test reads on the page. */
const en = (code: string) => CODE_LABELS[code].en;

let suite: FakePlatformSuite;
let platforms: TestPlatforms;
let fake: FakePlatform;
let app: RunningApp;
let client: TestClient;
let pool: Pool;
let chromium: RunningBrowser;
/** MERCHANT_SECRETS_KEYS_FILE of both apps (one database): the accounts added through the console are sealed under its key. */
let keysFile: string;
/** Every URL any page asked for, to prove no token ever travels in one. */
const requestedUrls: string[] = [];
/** What the pages' consoles said: a CSP violation shows up here. */
const consoleErrors: string[] = [];

beforeAll(async () => {
  buildConsole();
  // WeChat answers PROCESSING: only the refund notice settles the refund.
  suite = await startFakePlatformSuite({ defaultRefund: 'processing' });
  ({ platforms, fake, pool } = suite);
  keysFile = join(mkdtempSync(join(tmpdir(), 'pcs-console-secrets-keys-')), 'keys');
  writeFileSync(keysFile, `k1:${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  app = await suite.startApp({
    ...suite.env,
    MERCHANT_SECRETS_KEYS_FILE: keysFile,
    REFUND_POLL_INTERVAL_MS: '50',
    REFUND_APPROVAL_THRESHOLD: String(THRESHOLD),
    PUBLIC_BASE_URL: 'https://pay.example.com',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_SCHEDULE_SECONDS: '0,1',
    WEBHOOK_POLL_INTERVAL_MS: '50',
  });
  client = suite.clientOf(app);
  chromium = await launchChromium();
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
  await page
    .getByText(/^(Loading…|加载中…)$/)
    .first()
    .waitFor({ state: 'detached' });
}

/**
 * Until the dialog's opening animation is over: axe measures contrast on what is drawn, and a
 * dialog still fading in has its text at part opacity.
 */
const dialogOpened = (page: Page) =>
  eventually(
    'the dialog to finish opening',
    () =>
      page.evaluate<boolean>(
        `[...document.querySelectorAll('.ant-modal')].every((m) => !/-(appear|enter)/.test(m.className) && getComputedStyle(m).opacity === '1')`,
      ),
    10_000,
  );

/** The dialog once its opening animation is over: a click on one of its buttons during the zoom can be lost. */
async function openedDialog(page: Page, name: string): Promise<Locator> {
  const dialog = page.getByRole('dialog', { name });
  await dialog.waitFor();
  await dialogOpened(page);
  return dialog;
}

/**
 * Confirms the approval dialog open on `page` (once its opening animation is over, so the click
 * lands on the button), and returns the server's answer to the approval it sends: a test that
 * then waits for the queue to change fails on that answer, not on a row that stayed.
 */
async function confirmApproval(page: Page): Promise<{ status: number; body: string }> {
  await dialogOpened(page);
  const answered = page.waitForResponse((r) => r.request().method() === 'POST' && /\/approve$/.test(r.url()), {
    timeout: 30_000,
  });
  await page.getByRole('dialog', { name: 'Confirm the approval' }).getByRole('button', { name: 'Approve' }).click();
  const response = await answered;
  return { status: response.status(), body: await response.text() };
}

/** The screenshots docs/console.md shows. */
const IN_DOCS = new Set([
  'anomaly-refund',
  'approvals',
  'approval-confirm',
  'anomaly-resolved',
  'order',
  'orders',
  'webhook-secret',
  'webhook-attempts',
  'overview-en-1440',
  'overview-zh-1440',
  'anomalies-en-1440',
  'refused-en-1440',
]);

/** Into test-output/console-screenshots/, and docs/console/ as well when CONSOLE_SCREENSHOTS=true and the docs show it. */
async function screenshot(page: Page, name: string): Promise<void> {
  await saveScreenshot(page, name, IN_DOCS.has(name) ? DOCS : undefined);
}

/** An element as read in the page (this file is compiled without the DOM's types). */
interface Attributed {
  getAttribute(name: string): string | null;
}

/** The dropdown of the Ant Design select whose input is #id (its listbox is #<id>_list). */
const dropdownOf = (page: Page, id: string) =>
  page.locator('.ant-select-dropdown', { has: page.locator(`[id="${id}_list"]`) });

/** Picks `label` in the Ant Design select whose input is #id. */
async function choose(page: Page, id: string, label: string): Promise<void> {
  await page.locator(`#${id}`).click();
  await dropdownOf(page, id).locator(`.ant-select-item-option[title="${label}"]`).click();
  await dropdownOf(page, id).waitFor({ state: 'hidden' });
}

/** The options the select #id offers after its first ("Any"), by their labels. */
async function offered(page: Page, id: string): Promise<string[]> {
  await page.locator(`#${id}`).click();
  const options = dropdownOf(page, id).locator('.ant-select-item-option');
  await options.first().waitFor();
  const titles = await options.evaluateAll((all: Attributed[]) => all.map((o) => o.getAttribute('title') ?? ''));
  await page.keyboard.press('Escape');
  await dropdownOf(page, id).waitFor({ state: 'hidden' });
  return titles.slice(1);
}

/** What the select #id shows as chosen. */
const chosen = (page: Page, id: string) => page.locator('.ant-select', { has: page.locator(`#${id}`) }).textContent();

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

/** An order whose payment this service created at the fake WeChat Pay (POST /payment-orders with method). */
async function createdPaymentOrder(fields: Record<string, unknown> = {}) {
  const orderNo = uniqueId('CP');
  const answer = await client.api('POST', '/payment-orders', {
    orderNo,
    userId: 'u-1',
    amount: 1999,
    currency: 'CNY',
    channel: 'WECHATPAY',
    method: 'NATIVE',
    description: 'A coffee',
    ...fields,
  });
  return { orderNo, answer };
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
    await alice.page.getByRole('heading', { name: `Anomaly ${anomalyId}: Duplicate payment` }).waitFor();
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
    await alice.page.getByRole('status').locator('.status-awaiting_approval').waitFor();
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
    const confirm = await openedDialog(alice.page, 'Confirm the approval');
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
    await (await openedDialog(alice.page, 'Confirm the approval')).getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect(await count(pool, 'SELECT COUNT(*) FROM admin_audit WHERE id > ?', [auditedBefore])).toBe(0);
    await ownRow.getByRole('button', { name: 'Approve' }).click();
    await (await openedDialog(alice.page, 'Confirm the approval')).getByRole('button', { name: 'Approve' }).click();
    await alice.page.getByRole('alert').filter({ hasText: asked.refund_no }).waitFor();
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
    const bobConfirms = await openedDialog(bob.page, 'Confirm the approval');
    await bobConfirms.getByText('alice').waitFor();
    await screenshot(bob.page, 'approval-confirm');
    await expect(confirmApproval(bob.page)).resolves.toMatchObject({ status: 200 });
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

    await go(alice.page, `#/anomalies/${anomalyId}`, `Anomaly ${anomalyId}: Duplicate payment`);
    await alice.page.locator('.facts .status-resolved').waitFor();
    const refundRow = alice.page.getByRole('row', { name: new RegExp(asked.refund_no) });
    await refundRow.locator('.status-succeeded').waitFor();
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
      // Her attempt to approve her own refund, refused, is audited too.
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
    await go(alice.page, `#/anomalies/${anomalyId}`, `Anomaly ${anomalyId}: Duplicate payment`);

    // A note is required; DUPLICATE_OF needs a reference, and the server's refusal is shown.
    await alice.page.getByRole('button', { name: 'Resolve', exact: true }).click();
    await alice.page.getByText('A note is required.').waitFor();
    await choose(alice.page, 'resolve-why', en('DUPLICATE_OF'));
    await alice.page.getByLabel('Note').fill('the customer was charged once by the bank');
    await alice.page.getByRole('button', { name: 'Resolve', exact: true }).click();
    await alice.page.getByText('reference is required for DUPLICATE_OF').waitFor();
    await choose(alice.page, 'resolve-why', en('REFUNDED_OUTSIDE'));
    await alice.page.getByLabel('Reference').fill('BANK-4711');
    await alice.page.getByRole('button', { name: 'Resolve', exact: true }).click();

    // 80.00 is over the threshold: it waits for a second admin, and the refund form is gone.
    const resolution = alice.page.getByRole('region', { name: 'Resolution' });
    await resolution.locator('.status-awaiting_approval').waitFor();
    // The anomaly list says it: a resolution waits for approval.
    await go(alice.page, '#/anomalies?type=DUPLICATE_PAYMENT', 'Anomalies');
    await alice.page
      .getByRole('row', { name: new RegExp(duplicateBy) })
      .locator('.awaiting .status-awaiting_approval')
      .waitFor();
    await go(alice.page, `#/anomalies/${anomalyId}`, `Anomaly ${anomalyId}: Duplicate payment`);
    expect(await alice.page.getByRole('button', { name: 'Refund', exact: true }).count()).toBe(0);
    await resolution.getByRole('button', { name: 'Approve resolution' }).click();
    await resolution.getByRole('alert').getByText('cannot approve it; another admin must').waitFor();
    await screenshot(alice.page, 'anomaly-resolution');

    const bob = await operatorPage(platforms.admins.admin2);
    await go(bob.page, `#/anomalies/${anomalyId}`, `Anomaly ${anomalyId}: Duplicate payment`);
    await bob.page.getByRole('button', { name: 'Approve resolution' }).click();
    await bob.page.locator('.facts .status-resolved').first().waitFor();
    await bob.page.getByRole('region', { name: 'Resolution' }).locator('.status-applied').waitFor();
    const decisions = bob.page.getByRole('table', { name: 'Decisions' });
    await decisions.getByRole('row', { name: /bob\s*Resolution approved/ }).waitFor();
    await decisions.getByRole('row', { name: /alice\s*Resolution asked/ }).waitFor();

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

  it("should let a second admin reject a refund above the threshold with a reason, nothing sent, and mark the shop's own refunds", async () => {
    const { orderNo, duplicateBy, anomalyId } = await duplicatePayment();
    const alice = await operatorPage(platforms.admins.admin);
    await go(alice.page, `#/anomalies/${anomalyId}`, `Anomaly ${anomalyId}: Duplicate payment`);
    await alice.page.getByLabel('Reason').fill('paid twice (ticket 4712)');
    await alice.page.getByRole('button', { name: 'Refund', exact: true }).click();
    await alice.page.getByRole('status').locator('.status-awaiting_approval').waitFor();
    const [asked] = await refundsOf(duplicateBy);

    // Bob rejects it: a reason is required, then the refund is REJECTED and the channel never called.
    const bob = await operatorPage(platforms.admins.admin2);
    await go(bob.page, '#/approvals', 'Refund approvals');
    const queue = bob.page.getByRole('table', { name: 'Waiting for a second admin' });
    await queue
      .getByRole('row', { name: new RegExp(asked.refund_no) })
      .getByRole('button', { name: 'Reject' })
      .click();
    const rejecting = await openedDialog(bob.page, `Reject ${asked.refund_no}`);
    await rejecting.getByRole('button', { name: 'Reject' }).click();
    await rejecting.getByText('A reason is required.').waitFor();
    expect((await refundsOf(duplicateBy))[0].status).toBe('AWAITING_APPROVAL');
    await rejecting.getByLabel('Reason for rejecting').fill('the customer was refunded by the bank');
    await rejecting.getByRole('button', { name: 'Reject' }).click();
    await queue.getByRole('row', { name: new RegExp(asked.refund_no) }).waitFor({ state: 'detached' });
    const decided = bob.page
      .getByRole('table', { name: 'Recent decisions' })
      .getByRole('row', { name: new RegExp(asked.refund_no) });
    await decided.locator('.status-rejected').waitFor();
    await expect(decided.textContent()).resolves.toMatch(/alice.*bob/);
    expect((await refundsOf(duplicateBy))[0]).toMatchObject({ status: 'REJECTED', reviewed_by: 'bob' });
    expect(fake.callsFor(asked.refund_no)).toBe(0);
    const [audits] = await pool.query<RowDataPacket[]>(
      'SELECT operator_id, action FROM admin_audit WHERE target = ? ORDER BY id',
      [`refund:${asked.refund_no}`],
    );
    expect(audits.map((a) => `${a.operator_id} ${a.action}`)).toEqual(['bob REFUND_REJECTED']);

    // The rejection gave the amount back: the order's view counts nothing reserved, and alice's
    // page, read again, offers the whole duplicate. She asks for the same amount again: it is
    // another refund (the form's own number), and bob approves it this time.
    const view = await client.admin('GET', `/admin/orders/${orderNo}`, platforms.admins.admin);
    const duplicate = view
      .json<{ payments: Array<{ transactionId: string; refundReservedAmount: number }> }>()
      .payments.find((p) => p.transactionId === duplicateBy);
    expect(duplicate?.refundReservedAmount).toBe(0);
    await alice.page.reload();
    await alice.page.getByRole('heading', { name: `Anomaly ${anomalyId}: Duplicate payment`, level: 1 }).waitFor();
    await alice.page.getByTestId('refundable').getByText('80.00 CNY').waitFor();
    await alice.page.getByLabel('Reason').fill('paid twice, the bank did not refund (ticket 4712)');
    await alice.page.getByRole('button', { name: 'Refund', exact: true }).click();
    await alice.page.getByRole('status').locator('.status-awaiting_approval').waitFor();
    const [, again] = await refundsOf(duplicateBy);
    expect(again).toMatchObject({ status: 'AWAITING_APPROVAL', amount: AMOUNT, requested_by: 'alice' });
    expect(again.refund_no).not.toBe(asked.refund_no);
    // Bob's queue, as alice's page, shows what it read when it was opened: read again.
    await bob.page.reload();
    await queue
      .getByRole('row', { name: new RegExp(again.refund_no) })
      .getByRole('button', { name: 'Approve' })
      .click();
    await expect(confirmApproval(bob.page)).resolves.toMatchObject({ status: 200 });
    await queue.getByRole('row', { name: new RegExp(again.refund_no) }).waitFor({ state: 'detached' });
    await eventually(
      'the channel to accept the refund asked again',
      async () => (await refundsOf(duplicateBy))[1].status === 'PROCESSING',
      15_000,
    );
    expect([fake.callsFor(asked.refund_no), fake.callsFor(again.refund_no)]).toEqual([0, 1]);
    expect(await refundsOf(duplicateBy)).toHaveLength(2);

    // The shop's own refund of the order (the order service's API) is marked as the shop's.
    const shop = await client.api('POST', `/payment-orders/${orderNo}/refunds`, {
      refundNo: uniqueId('RS'),
      amount: 100,
      reason: 'returned goods',
    });
    expect(shop.status).toBeLessThan(300);
    const { refundNo } = shop.json<{ refundNo: string }>();
    await go(alice.page, '#/refunds', 'Refunds');
    const shopRow = alice.page.getByRole('row', { name: new RegExp(refundNo) });
    await shopRow.locator('.shop-refund').getByText('Shop refund').waitFor();
    expect(
      await alice.page
        .getByRole('row', { name: new RegExp(asked.refund_no) })
        .locator('.shop-refund')
        .count(),
    ).toBe(0);
    await alice.context.close();
    await bob.context.close();
  });

  it("should show the payment created at the channel on the order's page, in English and in Chinese, its refusal with the channel's code, and no buyer secret", async () => {
    const { orderNo, answer } = await createdPaymentOrder();
    expect(answer.status).toBe(201);
    const { payment } = answer.json<{ payment: { buyer: { params: Record<string, string> } } }>();
    const codeUrl = payment.buyer.params.code_url;
    expect(codeUrl).toBeTruthy();
    const refusedNo = uniqueId('CP');
    fake.scriptCreate(refusedNo, { reject: 'INVALID_REQUEST', message: 'openid 与 appid 不匹配' });
    const refusal = await client.api('POST', '/payment-orders', {
      orderNo: refusedNo,
      userId: 'u-1',
      amount: 1999,
      currency: 'CNY',
      channel: 'WECHATPAY',
      method: 'JSAPI',
      description: 'A coffee',
      payer: { openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' },
    });
    expect(refusal.status).toBe(422);
    const { context, page } = await operatorPage(platforms.admins.viewer);

    await go(page, `#/orders/${orderNo}`, `Order ${orderNo}`);
    const created = page.getByRole('region', { name: 'Payment created at the channel' });
    await created.getByText('Native (QR code)').waitFor();
    await created.locator('.status-created').getByText('Created').waitFor();
    for (const label of ['Created', 'Expires', 'Valid until'])
      await created.getByText(label, { exact: true }).first().waitFor();
    expect(await created.locator('time').count()).toBeGreaterThanOrEqual(3);
    await created.getByText('code_url').waitFor();
    // What the buyer pays with is named, never shown.
    expect(await page.locator('body').innerText()).not.toContain(codeUrl);

    await page.getByRole('button', { name: '中文' }).click();
    const zh = page.getByRole('region', { name: '渠道下单' });
    await zh.getByText('Native 支付（扫码）').waitFor();
    await zh.locator('.status-created').getByText('已下单').waitFor();
    await zh.getByText('有效期至').waitFor();

    await go(page, `#/orders/${refusedNo}`, `订单 ${refusedNo}`);
    const refused = page.getByRole('region', { name: '渠道下单' });
    await refused.getByText('JSAPI 支付（微信内）').waitFor();
    await refused.locator('.status-refused').getByText('已拒绝').waitFor();
    await refused.getByTestId('channel-refusal').getByText('INVALID_REQUEST').waitFor();
    await expect(refused.getByTestId('channel-refusal').textContent()).resolves.toContain('openid 与 appid 不匹配');
    await page.getByRole('button', { name: 'English' }).click();
    await page.getByRole('region', { name: 'Payment created at the channel' }).getByText("Channel's refusal").waitFor();
    await context.close();
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

    await go(page, `#/anomalies/${anomalyId}`, `Anomaly ${anomalyId}: Duplicate payment`);
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
    // The refused attempt is audited, and nothing else of victor's.
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

  it('should fit every page at 1,280 and 1,440 px, in English and in Chinese: no sideways scroll, actions in sight, every code translated, axe and the CSP satisfied', async () => {
    const { orderNo, anomalyId } = await duplicatePayment();
    const { orderNo: createdNo } = await createdPaymentOrder();
    const receiver = new WebhookReceiver();
    await receiver.start();
    const endpoint = (
      await client.admin('POST', '/admin/webhook-endpoints', platforms.admins.admin, {
        url: receiver.url,
        description: 'shop',
      })
    ).json<{ id: string }>();
    const codes = Object.values(VOCABULARY_LISTS).flat();
    const findings: Record<string, unknown> = {};
    const pages: Array<[string, string, string | RegExp, string | RegExp]> = [
      ['overview', '#/', 'Overview', '概览'],
      ['anomalies', '#/anomalies', 'Anomalies', '异常'],
      ['anomaly', `#/anomalies/${anomalyId}`, /^Anomaly /, /^异常 /],
      ['approvals', '#/approvals', 'Refund approvals', '退款审批'],
      ['refunds', '#/refunds', 'Refunds', '退款'],
      ['orders', '#/orders', 'Orders', '订单'],
      ['order', `#/orders/${orderNo}`, `Order ${orderNo}`, `订单 ${orderNo}`],
      ['order-created-payment', `#/orders/${createdNo}`, `Order ${createdNo}`, `订单 ${createdNo}`],
      ['reconciliation', '#/reconciliation', 'Reconciliation', '对账'],
      ['reconciliation-day', '#/reconciliation/WECHATPAY/2026-11-01', /^Reconciliation WeChat Pay/, /^对账 微信支付/],
      ['dead-letters', '#/dead-letters', 'Dead letters', '死信'],
      ['webhooks', '#/webhooks', 'Webhooks', 'Webhook'],
      ['webhook', `#/webhooks/${endpoint.id}`, `Webhook endpoint ${endpoint.id}`, `Webhook 端点 ${endpoint.id}`],
      ['refused', '#/refused', 'Refused notifications', '被拒绝的通知'],
      ['merchants', '#/merchants', 'Merchants', '商户'],
    ];
    try {
      for (const viewport of [
        { width: 1280, height: 800 },
        { width: 1440, height: 900 },
      ]) {
        const { context, page } = await operatorPage(platforms.admins.admin, { viewport });
        if (viewport.width === 1280) {
          const signIn = await (await chromium.operator({ viewport })).newPage();
          await signIn.goto(`${app.url}/console/`);
          await signIn.getByLabel('Admin token').waitFor();
          const found = await accessibilityViolations(signIn);
          if (found.length > 0) findings['sign-in axe'] = found;
          await screenshot(signIn, 'sign-in');
          await signIn.context().close();
        }
        for (const language of ['en', 'zh'] as const) {
          if (language === 'zh') await page.getByRole('button', { name: '中文' }).click();
          for (const [name, hash, english, chinese] of pages) {
            const at = `${name} ${language} ${viewport.width}`;
            await go(page, hash, language === 'en' ? english : chinese);
            if (name === 'overview') await page.locator('figure.chart canvas').first().waitFor();
            const fit = await tablesFit(page, language === 'en' ? 'Actions' : '操作');
            if (fit.scrollsSideways || fit.actionColumnsHidden > 0) findings[`${at} fit`] = fit;
            if (
              ['anomalies', 'approvals', 'refunds', 'orders', 'order', 'webhooks', 'webhook', 'merchants'].includes(
                name,
              )
            ) {
              expect({ at, actionColumns: fit.actionColumns > 0 }).toEqual({ at, actionColumns: true });
            }
            const found = await accessibilityViolations(page);
            const serious = found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
            if (serious.length > 0) findings[`${at} axe`] = serious;
            if (language === 'zh') {
              const untranslated = await untranslatedCodes(page, codes);
              if (untranslated.length > 0) findings[`${at} untranslated`] = untranslated;
            }
            await screenshot(page, `${name}-${language}-${viewport.width}`);
          }
          if (language === 'zh') await page.getByRole('button', { name: 'English' }).click();
        }
        await context.close();
      }
    } finally {
      await client.admin('DELETE', `/admin/webhook-endpoints/${endpoint.id}`, platforms.admins.admin);
      await receiver.stop();
    }
    expect(findings).toEqual({});
    expect(consoleErrors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
  });

  it('should add a webhook endpoint in the browser with its secret shown once, recover and resend a failed delivery from its attempts, edit, disable and rotate it, in English and in Chinese', async () => {
    const receiver = new WebhookReceiver();
    await receiver.start();
    let endpointId: string | undefined;
    try {
      receiver.behaviour = () => ({ status: 503, body: 'receiver down for maintenance' });
      const { context, page } = await operatorPage(platforms.admins.admin);
      const violations: Record<string, unknown> = {};
      const check = async (name: string) => {
        const found = await accessibilityViolations(page);
        if (found.length > 0) violations[name] = found;
      };
      await go(page, '#/webhooks', 'Webhooks');
      await page.getByRole('button', { name: 'Add an endpoint' }).click();
      const adding = await openedDialog(page, 'Add an endpoint');
      await adding.getByLabel('URL').fill(receiver.url);
      await adding.getByLabel('Description').fill('shop');
      await check('add endpoint');
      await adding.getByRole('button', { name: 'Save' }).click();
      // The secret, once: the receiver verifies with it.
      const shown = await openedDialog(page, 'The signing secret, shown this once');
      const secret = (await shown.getByTestId('secret').textContent())!.trim();
      expect(secret).toMatch(/^whsec_/);
      receiver.secrets = [secret];
      await screenshot(page, 'webhook-secret');
      await shown.getByRole('button', { name: 'I have stored it' }).click();
      const [[row]] = await pool.query<RowDataPacket[]>(
        "SELECT id FROM webhook_endpoint WHERE url = ? AND description = 'shop'",
        [receiver.url],
      );
      endpointId = String(row.id);
      const id = endpointId;
      await page.getByRole('link', { name: `${id} · shop` }).waitFor();
      // Never again: the list and the page hold no secret.
      expect(await page.content()).not.toContain(secret);

      const { orderNo } = await duplicatePayment();
      await eventually(
        'the message to fail its two attempts',
        async () =>
          (await count(pool, "SELECT COUNT(*) FROM webhook_delivery WHERE endpoint_id = ? AND status = 'FAILED'", [
            id,
          ])) === 1,
        15_000,
      );
      await page.getByRole('link', { name: `${id} · shop` }).click();
      await page.getByRole('heading', { name: `Webhook endpoint ${id}`, level: 1 }).waitFor();
      await page.getByText('Loading…').first().waitFor({ state: 'detached' });
      await check('#/webhooks/:id');
      const attempts = page.getByRole('table', { name: 'Attempts, newest first' });
      const failed = attempts.locator('tbody tr.ant-table-row').filter({ hasText: orderNo }).filter({ hasText: '503' });
      await expect(failed.count()).resolves.toBe(2);
      await expect(attempts.getByText('receiver down for maintenance').count()).resolves.toBe(2);

      // Recover since a moment picked in the operator's format (en-GB: day first).
      receiver.behaviour = () => ({ status: 204 });
      const since = page.getByLabel('Send again what failed since');
      await since.click();
      await since.fill('01/01/2000 00:00');
      await since.blur();
      expect(await since.inputValue()).toBe('01/01/2000 00:00');
      const recovering = page.waitForRequest((r) => r.url().endsWith('/recover'));
      await page.getByRole('button', { name: 'Recover' }).click();
      // Midnight in the browser's zone (Paris), sent as the instant it is.
      expect((await recovering).postDataJSON()).toEqual({ since: '1999-12-31T23:00:00.000Z' });
      const said = page.locator('form.filters').locator('[role=status], [role=alert]').first();
      await said.waitFor();
      await expect(said.textContent()).resolves.toBe('Queued: 1');
      await eventually('the recovered message to be accepted', () => receiver.accepted().length === 1, 10_000);

      // Resend from a row of the attempts.
      const [eventId] = [...receiver.acceptedIds()];
      await attempts
        .getByRole('button', { name: `Resend ${eventId}` })
        .first()
        .click();
      await page.getByRole('status').getByText(`Queued: ${eventId}`).waitFor();
      await eventually('the resent message to be accepted', () => receiver.accepted().length === 2, 10_000);
      expect(receiver.repeatedAttempts()).toEqual([]);
      await screenshot(page, 'webhook-attempts');

      await page.getByRole('button', { name: '中文' }).click();
      await page.getByRole('heading', { name: `Webhook 端点 ${id}`, level: 1 }).waitFor();
      await check('zh #/webhooks/:id');
      await page.getByRole('button', { name: 'English' }).click();

      // Edit, disable, enable, rotate (the new secret shown once too).
      await go(page, '#/webhooks', 'Webhooks');
      await page.getByRole('button', { name: `Edit ${id}` }).click();
      const editing = await openedDialog(page, `Edit ${id}`);
      await editing.getByLabel('Description').fill('shop (orders)');
      await editing.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('link', { name: `${id} · shop (orders)` }).waitFor();
      await page.getByRole('button', { name: `Disable ${id}` }).click();
      await page.getByRole('button', { name: `Enable ${id}` }).waitFor();
      expect(await count(pool, 'SELECT COUNT(*) FROM webhook_endpoint WHERE id = ? AND enabled = 0', [id])).toBe(1);
      await page.getByRole('button', { name: `Enable ${id}` }).click();
      await page.getByRole('button', { name: `Disable ${id}` }).waitFor();
      await page.getByRole('button', { name: `Rotate secret ${id}` }).click();
      await (await openedDialog(page, 'Rotate secret')).getByRole('button', { name: 'Rotate secret' }).click();
      const rotated = (await page.getByTestId('secret').textContent())!.trim();
      expect(rotated).toMatch(/^whsec_/);
      expect(rotated).not.toBe(secret);
      await page.getByRole('button', { name: 'I have stored it' }).click();
      expect(violations).toEqual({});

      const [audit] = await pool.query<Array<RowDataPacket & { operator_id: string; action: string }>>(
        'SELECT operator_id, action FROM admin_audit WHERE target = ? ORDER BY id',
        [`webhook-endpoint:${id}`],
      );
      expect(audit.map((a) => [a.operator_id, a.action])).toEqual([
        ['alice', 'WEBHOOK_ENDPOINT_CREATED'],
        ['alice', 'WEBHOOK_RECOVERED'],
        ['alice', 'WEBHOOK_RESENT'],
        ['alice', 'WEBHOOK_ENDPOINT_UPDATED'],
        ['alice', 'WEBHOOK_ENDPOINT_UPDATED'],
        ['alice', 'WEBHOOK_ENDPOINT_UPDATED'],
        ['alice', 'WEBHOOK_SECRET_ROTATED'],
      ]);
      await context.close();
    } finally {
      if (endpointId) await client.admin('DELETE', `/admin/webhook-endpoints/${endpointId}`, platforms.admins.admin);
      await receiver.stop();
    }
  });

  it("should offer the API's channels, anomaly types and refund statuses as filters, by their labels, a linked filter selected", async () => {
    const { context, page } = await operatorPage(platforms.admins.viewer);
    await go(page, '#/anomalies?channel=UNIONPAY&type=MERCHANT_MISMATCH', 'Anomalies');

    expect(await offered(page, 'channel')).toEqual(REGISTERED_CHANNELS.map(en));
    expect(await offered(page, 'type')).toEqual(Object.values(AnomalyType).map(en));
    expect(await offered(page, 'status')).toEqual(Object.values(AnomalyStatus).map(en));
    await expect(chosen(page, 'channel')).resolves.toContain('UnionPay');
    await expect(chosen(page, 'type')).resolves.toContain('Merchant mismatch');

    await go(page, '#/refunds', 'Refunds');
    const chips = page.getByRole('navigation', { name: 'Status' }).getByRole('link');
    await chips.getByText('Rejected', { exact: true }).waitFor();
    expect(await chips.allTextContents()).toEqual(['Any', ...Object.values(RefundStatus).map(en)]);
    expect(await chips.evaluateAll((all: Attributed[]) => all.map((a) => a.getAttribute('data-code') ?? ''))).toEqual([
      '',
      ...Object.values(RefundStatus),
    ]);
    await context.close();
  });

  it('should list orders by status and channel, and export what the filters select as CSV', async () => {
    const { orderNo, paidBy } = await duplicatePayment();
    const { context, page } = await operatorPage(platforms.admins.viewer);
    await go(page, '#/orders', 'Orders');

    expect(await offered(page, 'status')).toEqual(Object.values(OrderStatus).map(en));
    // An en-GB browser: its date fields day first, as its moments are.
    await page.getByLabel('From (UTC) (dd/mm/yyyy)').waitFor();
    expect(await offered(page, 'channel')).toEqual(REGISTERED_CHANNELS.map(en));
    await choose(page, 'status', 'Paid');
    await choose(page, 'channel', 'WeChat Pay');
    await page.getByRole('button', { name: 'Filter' }).click();
    const table = page.getByRole('table', { name: 'Orders, newest first' });
    const row = table.getByRole('row', { name: new RegExp(orderNo) });
    await row.waitFor();
    expect(page.url()).toContain('#/orders?status=PAID&channel=WECHATPAY');
    await expect(row.textContent()).resolves.toContain(paidBy);
    await expect(row.textContent()).resolves.toContain('80.00 CNY');
    const listed = await table.locator('tbody tr.ant-table-row').count();
    await expect(table.locator('tbody .status').allTextContents()).resolves.toEqual(Array(listed).fill('Paid'));
    await expect(table.locator('tbody .status-paid').count()).resolves.toBe(listed);

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
    // The platform's retry of a payment (signed again, other bytes): the second is a repeat (DUPLICATE), an outcome of its own.
    const repeatedNo = uniqueId('CR');
    const repeatedBy = uniqueId('T');
    expect((await client.registerOrder({ orderNo: repeatedNo, amount: AMOUNT })).status).toBe(201);
    for (let delivery = 0; delivery < 2; delivery++) {
      const payment = client.wechatpayPayment({ outTradeNo: repeatedNo, transactionId: repeatedBy, total: AMOUNT });
      expect((await client.postWechatpay(payment)).status).toBe(204);
    }
    expect(
      await count(pool, "SELECT COUNT(*) FROM callback_delivery WHERE transaction_id = ? AND outcome = 'DUPLICATE'", [
        repeatedBy,
      ]),
    ).toBe(1);
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
      expect.arrayContaining(REGISTERED_CHANNELS.map(en)),
    );
    await expect(legends.nth(1).locator('.u-legend .u-label').allTextContents()).resolves.toEqual(
      expect.arrayContaining([en('PAID'), en('DUPLICATE_PAYMENT'), en('DUPLICATE')]),
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
    await go(page, `#/anomalies/${anomalyId}`, `Anomaly ${anomalyId}: Duplicate payment`);
    const created = page.locator('.facts .time').first();
    const iso = (await created.locator('time').getAttribute('datetime'))!;
    const beijingHour = String((new Date(iso).getUTCHours() + 8) % 24).padStart(2, '0');
    expect(await created.textContent()).toMatch(
      new RegExp(
        `^\\d{2}/\\d{2}/\\d{4}, \\d{2}:\\d{2}:\\d{2} (EST|GMT-5) Beijing time \\d{2}/\\d{2}/\\d{4}, ${beijingHour}:\\d{2}:\\d{2}$`,
      ),
    );
    await go(page, '#/anomalies', 'Anomalies');
    // The date filters are Ant Design's DatePicker in the console's locale and format (not the
    // browser's own date input, whose format follows its UI language): month first here, and a day
    // that is not one in that format is not taken.
    const from = page.getByLabel('From (UTC) (mm/dd/yyyy)');
    await from.fill('31/12/2026');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('Loading…').first().waitFor({ state: 'detached' });
    expect(page.url()).not.toContain('from=');
    expect(await from.inputValue()).toBe('');
    await from.fill('12/01/2026');
    await from.press('Enter');
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
    await expect(page.locator('figure.chart').nth(1).locator('.u-legend .u-label').allTextContents()).resolves.toEqual(
      expect.arrayContaining([CODE_LABELS.PAID.zh, CODE_LABELS.DUPLICATE_PAYMENT.zh, CODE_LABELS.DUPLICATE.zh]),
    );
    await go(page, '#/orders?from=2026-12-01', '订单');
    expect(await page.getByLabel('开始 (UTC) (yyyy/mm/dd)').inputValue()).toBe('2026/12/01');
    await go(page, `#/anomalies/${anomalyId}`, /^异常 /);
    expect(await page.locator('.facts .time').first().textContent()).toMatch(
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
    await openedDialog(page, 'Confirm the approval');
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
    const zh = await openedDialog(page, '确认批准');
    await expect(zh.getByTestId('confirm-amount').textContent()).resolves.toBe('80.00 CNY');
    await dialogOpened(page);
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
      ...VOCABULARY_LISTS,
      channels: [...REGISTERED_CHANNELS],
      anomalyTypes: Object.values(AnomalyType),
      anomalyStatuses: Object.values(AnomalyStatus),
      refundPurposes: Object.values(RefundPurpose),
      refundStatuses: Object.values(RefundStatus),
      orderStatuses: Object.values(OrderStatus),
      refundApprovalThreshold: THRESHOLD,
      refusalReasons: REFUSAL_REASONS,
      shopRequester: 'order-service',
    });
    const served = (await read('/admin/vocabulary')).json<Record<string, unknown>>();
    for (const list of ['refusalReasons', 'deliveryOutcomes', 'auditActions', 'eventTypes', 'resolutionStatuses'])
      expect({ list, codes: (served[list] as string[]).length > 0 }).toEqual({ list, codes: true });
    expect(served.auditActions).toEqual(expect.arrayContaining(['REFUND_APPROVED', 'REFUND_APPROVE_REFUSED']));
    expect((await client.admin('GET', '/admin/vocabulary', undefined)).status).toBe(401);
  });

  it("should answer errors with the product's codes, never the framework's class names", async () => {
    const badFilter = await read('/admin/anomalies?channel=PAYPAL');
    expect(badFilter.status).toBe(400);
    expect(badFilter.json()).toMatchObject({ statusCode: 400, error: 'MalformedRequest' });
    const badBody = await client.admin('POST', '/admin/refunds/emergency', platforms.admins.admin, { amount: 'x' });
    expect(badBody.status).toBe(400);
    expect(badBody.json()).toMatchObject({ error: 'MalformedRequest' });
    const unknownRoute = await read('/admin/no-such-thing');
    expect(unknownRoute.status).toBe(404);
    expect(unknownRoute.json()).toMatchObject({ error: 'NotFound' });
    const notJson = await fetch(`${app.url}/admin/refunds/emergency`, {
      method: 'POST',
      headers: { authorization: `Bearer ${platforms.admins.admin}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ error: 'MalformedRequest' });
    for (const answer of [badFilter.json(), badBody.json(), unknownRoute.json()])
      expect(JSON.stringify(answer)).not.toMatch(/Exception|FST_ERR/);
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

describe('the merchant directory in the browser', () => {
  /** A service provider (WeChat Pay partner mode) whose only platform certificate expires in ten days. */
  const PROVIDER = '1230000747';
  const PROVIDER_APPID = 'wx7470000000000747';
  const CONFIGURED_SUB = '1900000747';
  const CERT_DAYS = 10;
  let provider: RunningApp;
  let providerClient: TestClient;

  beforeAll(async () => {
    const account = createWechatpayAccount(PROVIDER, [PROVIDER_APPID]);
    const certPath = join(mkdtempSync(join(tmpdir(), 'pcs-console-cert-')), 'platform.pem');
    writeFileSync(
      certPath,
      await generateCertificate(generateRsaKeyPair(), '7470AB', {
        notAfter: new Date(Date.now() + CERT_DAYS * 24 * 3600 * 1000 + 3600 * 1000),
      }),
    );
    // startApp writes the app's configuration into process.env: the suite's app keeps its own after this one starts.
    const saved = { ...process.env };
    try {
      provider = await startApp({
        ...Object.fromEntries(
          Object.entries(suite.env).filter(([name]) => !name.startsWith('WECHATPAY_') || name.endsWith('_URL')),
        ),
        WECHATPAY_MCHID: PROVIDER,
        WECHATPAY_APPIDS: PROVIDER_APPID,
        WECHATPAY_SUB_MCHIDS: CONFIGURED_SUB,
        WECHATPAY_APIV3_KEY: account.apiV3Key,
        WECHATPAY_PUBLIC_KEY_ID: account.signer.serial,
        WECHATPAY_PUBLIC_KEY_PATH: account.publicKeyPath,
        WECHATPAY_PLATFORM_CERT_PATHS: certPath,
        MERCHANT_SECRETS_KEYS_FILE: keysFile,
      });
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
    providerClient = new TestClient(provider.url, platforms);
  });

  afterAll(() => provider?.close());

  /** An operator's browser signed in to the provider's service. */
  async function providerPage(token: string, options?: BrowserContextOptions) {
    const context = await chromium.operator(options);
    const page = await context.newPage();
    page.on('request', (request) => requestedUrls.push(request.url()));
    await page.goto(`${provider.url}/console/`);
    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page.goto(`${provider.url}/console/#/merchants`);
    await page.getByRole('heading', { name: 'Merchants', level: 1 }).waitFor();
    await page.getByText('Loading…').first().waitFor({ state: 'detached' });
    return { context, page };
  }

  const changesOf = async (subMerchantId: string) => {
    const [rows] = await pool.query<RowDataPacket[]>(
      `SELECT c.action, c.operator_id FROM merchant_change c
        WHERE c.sub_merchant_id = ? OR c.decides_change_id IN (SELECT id FROM merchant_change WHERE sub_merchant_id = ?)
        ORDER BY c.id`,
      [subMerchantId, subMerchantId],
    );
    return rows.map((r) => `${r.operator_id} ${r.action}`);
  };

  it("should add a sub-merchant, disable it once a second admin approves (the proposer's own approval refused with the server's words), and enable it again, in English and in Chinese", async () => {
    const sub = `19${String(Date.now()).slice(-8)}`;
    const alice = await providerPage(platforms.admins.admin);
    const accounts = alice.page.getByRole('table', { name: 'Accounts and sub-merchants' });
    const configured = accounts.getByRole('row', { name: new RegExp(CONFIGURED_SUB) });
    await expect(configured.textContent()).resolves.toContain('Configuration');
    await configured.locator('.state-enabled').waitFor();

    // Added through the provider's row: no second admin needed.
    await alice.page.getByRole('button', { name: `Add a sub-merchant WeChat Pay ${PROVIDER}` }).click();
    const adding = await openedDialog(alice.page, `Add a sub-merchant WeChat Pay ${PROVIDER}`);
    await adding.getByRole('button', { name: 'Add a sub-merchant' }).click();
    await adding.getByText('A sub-merchant id is required.').waitFor();
    await adding.getByLabel('Sub-merchant id (sub_mchid)').fill(sub);
    await adding.getByLabel('Sub-merchant app (sub_appid)').fill('wx7470000000000999');
    await adding.getByRole('button', { name: 'Add a sub-merchant' }).click();
    await adding.waitFor({ state: 'detached' });
    const added = accounts.getByRole('row', { name: new RegExp(sub) });
    await added.getByText('Directory').waitFor();
    await expect(added.textContent()).resolves.toContain('wx7470000000000999');
    await added.locator('.state-enabled').waitFor();

    // Disabling is a proposal: a reason is required, and nothing is disabled yet.
    const name = `WeChat Pay ${PROVIDER} / ${sub}`;
    await added.getByRole('button', { name: `Propose to disable ${name}` }).click();
    const proposing = await openedDialog(alice.page, `Propose to disable ${name}`);
    await proposing.getByRole('button', { name: 'Propose to disable' }).click();
    await proposing.getByText('A reason is required.').waitFor();
    await proposing.getByLabel('Reason').fill('contract ended (ticket 4747)');
    await proposing.getByRole('button', { name: 'Propose to disable' }).click();
    await alice.page.getByRole('status').getByText(`Proposed: waiting for another admin: ${name}`).waitFor();
    const pending = alice.page.getByRole('table', { name: 'Waiting for a second admin' });
    const proposal = pending.getByRole('row', { name: new RegExp(sub) });
    await proposal.getByText(en('DISABLE_PROPOSED')).waitFor();
    await expect(proposal.textContent()).resolves.toMatch(/contract ended \(ticket 4747\).*alice/);
    await added.locator('.state-enabled').waitFor();
    const [[{ id }]] = await pool.query<RowDataPacket[]>(
      "SELECT id FROM merchant_change WHERE sub_merchant_id = ? AND action = 'DISABLE_PROPOSED'",
      [sub],
    );

    // The proposer's own approval: the server refuses it, and the page says what the server said.
    await proposal.getByRole('button', { name: `Approve #${id}` }).click();
    const confirm = await openedDialog(alice.page, 'Approve this change');
    await confirm.getByText('contract ended (ticket 4747)').waitFor();
    await confirm.getByRole('button', { name: 'Approve' }).click();
    await alice.page
      .getByRole('alert')
      .getByText(`#${id}: operator alice proposed change ${id} and cannot approve it; another admin must`)
      .waitFor();
    await added.locator('.state-enabled').waitFor();

    // Bob approves it: the sub-merchant is disabled, the proposal leaves the queue, the history says who.
    const bob = await providerPage(platforms.admins.admin2);
    const bobsQueue = bob.page.getByRole('table', { name: 'Waiting for a second admin' });
    await bobsQueue.getByRole('button', { name: `Approve #${id}` }).click();
    await (await openedDialog(bob.page, 'Approve this change')).getByRole('button', { name: 'Approve' }).click();
    const bobsRow = bob.page.getByRole('table', { name: 'Accounts and sub-merchants' }).getByRole('row', {
      name: new RegExp(sub),
    });
    await bobsRow.locator('.state-disabled').getByText('Disabled').waitFor();
    await bobsQueue.getByRole('row', { name: new RegExp(sub) }).waitFor({ state: 'detached' });
    const history = bob.page.getByRole('table', { name: 'History, newest first' });
    await history
      .getByRole('row', { name: new RegExp(`${en('APPROVED')}.*bob`) })
      .first()
      .waitFor();
    expect(await changesOf(sub)).toEqual(['alice SUB_MERCHANT_ADDED', 'alice DISABLE_PROPOSED', 'bob APPROVED']);

    // In Chinese: the same page, the sub-merchant disabled; enabled again at once.
    await bob.page.getByRole('button', { name: '中文' }).click();
    await bob.page.getByRole('heading', { name: '商户', level: 1 }).waitFor();
    const zhRow = bob.page.getByRole('table', { name: '商户号与子商户' }).getByRole('row', { name: new RegExp(sub) });
    await zhRow.locator('.state-disabled').getByText('已停用').waitFor();
    await zhRow.getByText('商户目录').waitFor();
    await bob.page
      .getByRole('table', { name: '变更历史（最新在前）' })
      .getByText(CODE_LABELS.APPROVED.zh)
      .first()
      .waitFor();
    expect(await untranslatedCodes(bob.page, ['SUB_MERCHANT_ADDED', 'DISABLE_PROPOSED', 'APPROVED'])).toEqual([]);
    await zhRow.getByRole('button', { name: `启用 微信支付 ${PROVIDER} / ${sub}` }).click();
    await zhRow.locator('.state-enabled').getByText('已启用').waitFor();
    await bob.page.getByRole('button', { name: 'English' }).click();
    expect(await changesOf(sub)).toEqual([
      'alice SUB_MERCHANT_ADDED',
      'alice DISABLE_PROPOSED',
      'bob APPROVED',
      'bob ENABLED',
    ]);
    const [audits] = await pool.query<RowDataPacket[]>(
      'SELECT operator_id, action FROM admin_audit WHERE target LIKE ? ORDER BY id',
      [`%${sub}%`],
    );
    expect(audits.map((a) => `${a.operator_id} ${a.action}`)).toEqual([
      'alice MERCHANT_SUB_MERCHANT_ADDED',
      'alice MERCHANT_DISABLE_PROPOSED',
      'bob MERCHANT_CHANGE_APPROVED',
      'bob MERCHANT_ENABLED',
    ]);
    await screenshot(bob.page, 'merchants');
    await alice.context.close();
    await bob.context.close();
  });

  it("should dry-run a candidate platform key against the recent notifications, show how many verify under each, and activate the candidate tried once a second admin approves, its overlap's end listed, in English and in Chinese", async () => {
    // Notifications from the minute picked on: one signed with the current Alipay key (paid), one with the next (refused, kept).
    const since = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const next = generateRsaKeyPair();
    const orderNo = uniqueId('KD');
    expect((await providerClient.registerOrder({ orderNo, amount: 100 })).status).toBe(201);
    expect(
      (
        await providerClient.postAlipay(
          providerClient.alipayPayment({ outTradeNo: orderNo, tradeNo: uniqueId('T'), totalAmount: '1.00' }),
        )
      ).body,
    ).toBe('success');
    const early = alipayDelivery(
      next.privateKey,
      alipayTradeParams({
        appId: platforms.alipay.appId,
        sellerId: platforms.alipay.sellerId,
        outTradeNo: uniqueId('KD'),
        tradeNo: uniqueId('T'),
        totalAmount: '1.00',
      }),
    );
    expect((await providerClient.postAlipay(early)).body).not.toBe('success');

    const { context, page } = await providerPage(platforms.admins.admin);
    await choose(page, 'dry-run-account', `Alipay ${platforms.alipay.appId}`);
    await expect(chosen(page, 'dry-run-kind')).resolves.toContain(en('publicKey'));
    await page.getByRole('button', { name: 'Run the dry run' }).click();
    await page.getByText('Paste the candidate key or certificate.').waitFor();
    await page.getByLabel('Candidate (PEM: a public key or a certificate)').fill(next.publicKeyPem);
    // The moment in the operator's format and zone (en-GB, Paris), sent as the instant it is.
    const paris = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Paris',
      day: '2-digit',
      month: '2-digit',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .format(since)
      .replace(',', '');
    const sinceField = page.getByLabel('Notifications since (empty: the last hour)');
    await sinceField.click();
    await sinceField.fill(paris);
    await sinceField.blur();
    const asked = page.waitForRequest((r) => r.url().endsWith('/key-dry-run'));
    await page.getByRole('button', { name: 'Run the dry run' }).click();
    expect((await asked).postDataJSON()).toEqual({
      kind: 'publicKey',
      candidatePem: next.publicKeyPem.trim(),
      since: since.toISOString(),
    });
    const report = page.getByTestId('dry-run-report');
    await report.waitFor();
    const counts = async (): Promise<Record<string, string | null>> => ({
      currentOnly: await report.getByTestId('currentOnly').textContent(),
      candidateOnly: await report.getByTestId('candidateOnly').textContent(),
      both: await report.getByTestId('both').textContent(),
    });
    expect(await counts()).toEqual({ currentOnly: '1', candidateOnly: '1', both: '0' });
    await expect(report.getByTestId('neither').textContent()).resolves.toMatch(/^\d+$/);
    await report.getByText('Current key only').waitFor();
    // The candidate is public material, yet the page keeps only what the form holds: no private key anywhere.
    expect(await page.content()).not.toContain('PRIVATE KEY');

    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('heading', { name: '商户', level: 1 }).waitFor();
    await page.getByRole('heading', { name: '密钥试验证' }).waitFor();
    await choose(page, 'dry-run-account', `支付宝 ${platforms.alipay.appId}`);
    await page.getByLabel('候选（PEM：公钥或证书）').fill(next.publicKeyPem);
    await page.getByRole('button', { name: '开始试验证' }).click();
    await report.getByText('仅当前密钥').waitFor();
    // The last hour: the same two notifications, and whatever the channel received besides (neither).
    expect(await counts()).toEqual({ currentOnly: '1', candidateOnly: '1', both: '0' });
    await page.getByRole('heading', { name: '提议启用' }).waitFor();
    await expect(page.getByLabel('重叠期（小时，0 至 168）').inputValue()).resolves.toBe('24');
    await page.getByRole('button', { name: 'English' }).click();
    const [[audit]] = await pool.query<RowDataPacket[]>(
      "SELECT COUNT(*) AS n FROM admin_audit WHERE operator_id = 'alice' AND action = 'PLATFORM_KEY_DRY_RUN' AND target = ?",
      [`merchant:ALIPAY:${platforms.alipay.appId}`],
    );
    expect(Number(audit.n)).toBeGreaterThanOrEqual(2);

    // Alice proposes the candidate tried (not what the form holds since) with a two-hour overlap.
    const appId = platforms.alipay.appId;
    const candidateField = page.getByLabel('Candidate (PEM: a public key or a certificate)');
    await choose(page, 'dry-run-account', `Alipay ${appId}`);
    await candidateField.fill(next.publicKeyPem);
    await page.getByRole('button', { name: 'Run the dry run' }).click();
    await report.waitFor();
    await candidateField.fill('edited after the dry run');
    expect(await page.getByLabel("The new key's id (PUB_KEY_ID_…)").count()).toBe(0);
    const overlap = page.getByLabel('Overlap (hours, 0 to 168)');
    await expect(overlap.inputValue()).resolves.toBe('24');
    await overlap.fill('2');
    const proposing = page.waitForRequest((r) => r.url().endsWith('/platform-keys'));
    await page.getByRole('button', { name: 'Propose activation' }).click();
    expect((await proposing).postDataJSON()).toEqual({
      kind: 'publicKey',
      candidatePem: next.publicKeyPem.trim(),
      overlapSeconds: 7200,
    });
    await page
      .getByRole('status')
      .getByText(`Activation proposed: waiting for another admin: Alipay ${appId}`)
      .waitFor();
    const [[proposed]] = await pool.query<RowDataPacket[]>(
      "SELECT id, candidate_fingerprint FROM merchant_change WHERE action = 'PLATFORM_KEY_PROPOSED' AND account_id = ? ORDER BY id DESC LIMIT 1",
      [appId],
    );
    const fingerprint = String(proposed.candidate_fingerprint);
    const waiting = page
      .getByRole('table', { name: 'Waiting for a second admin' })
      .getByRole('row', { name: new RegExp(`Approve #${proposed.id}`) });
    await waiting.getByText(en('PLATFORM_KEY_PROPOSED')).waitFor();
    await expect(waiting.textContent()).resolves.toContain(fingerprint);
    await expect(waiting.textContent()).resolves.not.toContain('BEGIN PUBLIC KEY');

    // WeChat Pay names its public key by an id: the field is offered, and the server's refusal without one is shown.
    await choose(page, 'dry-run-account', `WeChat Pay ${PROVIDER}`);
    await candidateField.fill(generateRsaKeyPair().publicKeyPem);
    await page.getByRole('button', { name: 'Run the dry run' }).click();
    await report.waitFor();
    await page.getByLabel("The new key's id (PUB_KEY_ID_…)").waitFor();
    await page.getByRole('button', { name: 'Propose activation' }).click();
    await page
      .getByRole('alert')
      .getByText(/the candidate is refused/)
      .waitFor();
    const serious = (await accessibilityViolations(page)).filter((v) =>
      ['serious', 'critical'].includes(v.impact ?? ''),
    );
    expect(serious).toEqual([]);
    await screenshot(page, 'key-activation');

    // Bob approves it from the proposals: the key is listed with its overlap's end, never its PEM.
    const bob = await providerPage(platforms.admins.admin2);
    await bob.page
      .getByRole('table', { name: 'Waiting for a second admin' })
      .getByRole('button', { name: `Approve #${proposed.id}` })
      .click();
    await (await openedDialog(bob.page, 'Approve this change')).getByRole('button', { name: 'Approve' }).click();
    const keys = bob.page.getByRole('table', { name: 'Platform keys activated through the directory' });
    const activated = keys.getByRole('row', { name: new RegExp(fingerprint) });
    await activated.waitFor();
    const listed = (await providerClient.admin('GET', '/admin/merchants', platforms.admins.viewer)).json<{
      platformKeys: Array<{
        account: string;
        kind: string;
        fingerprint: string;
        activatedAt: string;
        overlapUntil: string;
      }>;
    }>();
    const key = listed.platformKeys.find((k) => k.fingerprint === fingerprint);
    expect(key).toMatchObject({ account: appId, kind: 'publicKey' });
    expect(Date.parse(key!.overlapUntil) - Date.parse(key!.activatedAt)).toBe(7200_000);
    await expect(activated.getByTestId('overlap-until').locator('time').getAttribute('datetime')).resolves.toBe(
      key!.overlapUntil,
    );
    await expect(activated.textContent()).resolves.toContain(en('publicKey'));
    await expect(keys.textContent()).resolves.not.toContain('BEGIN');
    expect((await tablesFit(bob.page, 'Actions')).scrollsSideways).toBe(false);
    await screenshot(bob.page, 'merchant-keys');
    const [audits] = await pool.query<RowDataPacket[]>(
      `SELECT operator_id, action, target FROM admin_audit
        WHERE action IN ('PLATFORM_KEY_PROPOSED', 'PLATFORM_KEY_PROPOSE_REFUSED', 'MERCHANT_CHANGE_APPROVED')
          AND target IN (?, ?, ?) ORDER BY id`,
      [`merchant:ALIPAY:${appId}`, `merchant:WECHATPAY:${PROVIDER}`, `merchant-change:${proposed.id}`],
    );
    expect(audits.map((a) => `${a.operator_id} ${a.action} ${a.target}`)).toEqual([
      `alice PLATFORM_KEY_PROPOSED merchant:ALIPAY:${appId}`,
      `alice PLATFORM_KEY_PROPOSE_REFUSED merchant:WECHATPAY:${PROVIDER}`,
      `bob MERCHANT_CHANGE_APPROVED merchant:ALIPAY:${appId}`,
    ]);
    await bob.context.close();
    await context.close();
  });

  it("should add a WeChat Pay account through the form that then pays, its keys never stored in the clear, refuse a bad PEM in the server's words, and change its keys once a second admin approves", async () => {
    const mchid = `19${String(Date.now()).slice(-8)}`;
    const appid = `wx${mchid.slice(-8)}ac000001`;
    const first = createWechatpayAccount(mchid, [appid]);
    const next = createWechatpayAccount(mchid, [appid]);
    const pem = (path: string) => readFileSync(path, 'utf8');
    /** A new order paid (or not) by a payment notification of the account signed with `account`'s keys. */
    const pays = async (account: WechatpayTestAccount): Promise<boolean> => {
      const orderNo = uniqueId('DA');
      expect((await client.registerOrder({ orderNo, amount: 100, channel: 'WECHATPAY' })).status).toBe(201);
      const answer = await client.postWechatpay(
        client.wechatpayPayment(
          { mchid, appid, outTradeNo: orderNo, transactionId: uniqueId('T'), total: 100 },
          { signer: account.signer },
        ),
      );
      const [[order]] = await pool.query<RowDataPacket[]>('SELECT status FROM payment_order WHERE order_no = ?', [
        orderNo,
      ]);
      return answer.status === 204 && order.status === 'PAID';
    };
    /** Every value of the rows the directory and the audit keep of this account, as bytes. */
    const stored = async () => {
      const values: Buffer[] = [];
      for (const sql of [
        'SELECT * FROM merchant_change WHERE account_id = ?',
        'SELECT s.* FROM merchant_secret s JOIN merchant_change c ON c.secret_id = s.id WHERE c.account_id = ?',
        'SELECT * FROM admin_audit WHERE target LIKE ?',
      ]) {
        const [rows] = await pool.query<RowDataPacket[]>(sql, [sql.includes('LIKE') ? `%${mchid}%` : mchid]);
        for (const row of rows)
          for (const v of Object.values(row))
            if (v !== null) values.push(Buffer.isBuffer(v) ? v : Buffer.from(String(v)));
      }
      return values;
    };
    const cleartext = async (account: WechatpayTestAccount) => {
      const secrets = [account.apiV3Key, pem(account.merchantPrivateKeyPath).split('\n')[1]];
      return (await stored()).filter((v) => secrets.some((secret) => v.includes(secret)));
    };
    const directoryAccount = async () =>
      (await client.admin('GET', '/admin/merchants', platforms.admins.viewer))
        .json<{ accounts: Array<{ channel: string; account: string; source: string; applied?: boolean }> }>()
        .accounts.find((a) => a.channel === 'WECHATPAY' && a.account === mchid);
    expect(await pays(first)).toBe(false);

    const alice = await operatorPage(platforms.admins.admin);
    await go(alice.page, '#/merchants', 'Merchants');
    const fill = async (form: Locator, account: WechatpayTestAccount, platformKeyPem: string) => {
      await form.getByLabel('Merchant id (mchid)').fill(mchid);
      await form.getByLabel('App ids (appid; several separated by commas)').fill(appid);
      await form.getByLabel('APIv3 key').fill(account.apiV3Key);
      await form.getByLabel("Merchant certificate's serial number").fill(account.merchantSerialNo);
      await form.getByLabel('Platform public key id (PUB_KEY_ID_…)').fill(account.signer.serial);
      await form.getByLabel('Platform public key (PEM)').fill(platformKeyPem);
      await form.getByLabel('Merchant private key (PEM)').fill(pem(account.merchantPrivateKeyPath));
    };

    // A platform key that is no key: the server's 400, in its words, in the form; nothing added.
    await alice.page.getByRole('button', { name: 'Add an account' }).click();
    const adding = await openedDialog(alice.page, 'Add an account');
    await fill(adding, first, '-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----\n');
    const refused = alice.page.waitForResponse((r) => r.request().method() === 'POST' && /\/accounts$/.test(r.url()));
    await adding.getByRole('button', { name: 'Add an account' }).click();
    const refusal = await refused;
    expect(refusal.status()).toBe(400);
    const { message } = (await refusal.json()) as { message: string };
    expect(message).toMatch(/is not a PEM public key/);
    await adding.getByRole('alert').getByText(message).waitFor();
    expect(await directoryAccount()).toBeUndefined();
    expect(await count(pool, 'SELECT COUNT(*) AS n FROM merchant_change WHERE account_id = ?', [mchid])).toBe(0);

    // The right key in the same form: added at once, listed from the directory, and it pays.
    await adding.getByLabel('Platform public key (PEM)').fill(pem(first.publicKeyPath));
    await adding.getByRole('button', { name: 'Add an account' }).click();
    await adding.waitFor({ state: 'detached' });
    await alice.page.getByRole('status').getByText(`Account added: WeChat Pay ${mchid}`).waitFor();
    const accounts = alice.page.getByRole('table', { name: 'Accounts and sub-merchants' });
    const row = accounts.getByRole('row', { name: new RegExp(mchid) });
    await row.getByText('Directory').waitFor();
    await eventually('the account to be applied', async () => (await directoryAccount())?.applied === true, 10_000);
    expect(await directoryAccount()).toMatchObject({ source: 'directory', applied: true });
    expect(await pays(first)).toBe(true);
    expect(await cleartext(first)).toEqual([]);
    // Closed, the form kept nothing: opened again, it is empty.
    await alice.page.getByRole('button', { name: 'Add an account' }).click();
    expect(await adding.getByLabel('APIv3 key').inputValue()).toBe('');
    expect(await adding.getByLabel('Merchant private key (PEM)').inputValue()).toBe('');
    await adding.getByRole('button', { name: 'Cancel' }).click();
    await adding.waitFor({ state: 'detached' });

    // A change of its keys: prefilled with its public facts, every secret typed again; a proposal.
    const name = `WeChat Pay ${mchid}`;
    await row.getByRole('button', { name: `Propose a change of keys ${name}` }).click();
    const changing = await openedDialog(alice.page, `Propose a change of keys ${name}`);
    expect(await changing.getByLabel('Merchant id (mchid)').inputValue()).toBe(mchid);
    expect(await changing.getByLabel('Merchant id (mchid)').isDisabled()).toBe(true);
    expect(await changing.getByLabel('App ids (appid; several separated by commas)').inputValue()).toBe(appid);
    expect(await changing.getByLabel('Platform public key id (PUB_KEY_ID_…)').inputValue()).toBe(first.signer.serial);
    expect(await changing.getByLabel('APIv3 key').inputValue()).toBe('');
    await changing.getByLabel('APIv3 key').fill(next.apiV3Key);
    await changing.getByLabel("Merchant certificate's serial number").fill(next.merchantSerialNo);
    await changing.getByLabel('Platform public key id (PUB_KEY_ID_…)').fill(next.signer.serial);
    await changing.getByLabel('Platform public key (PEM)').fill(pem(next.publicKeyPath));
    await changing.getByLabel('Merchant private key (PEM)').fill(pem(next.merchantPrivateKeyPath));
    await changing.getByRole('button', { name: 'Propose a change of keys' }).click();
    await changing.waitFor({ state: 'detached' });
    await alice.page.getByRole('status').getByText(`Change proposed: waiting for another admin: ${name}`).waitFor();
    const proposal = alice.page
      .getByRole('table', { name: 'Waiting for a second admin' })
      .getByRole('row', { name: new RegExp(mchid) });
    await proposal.getByText(en('ACCOUNT_CHANGE_PROPOSED')).waitFor();
    const [[{ id }]] = await pool.query<RowDataPacket[]>(
      "SELECT id FROM merchant_change WHERE account_id = ? AND action = 'ACCOUNT_CHANGE_PROPOSED'",
      [mchid],
    );

    // Her own approval: refused, in the server's words; the first keys still pay.
    await proposal.getByRole('button', { name: `Approve #${id}` }).click();
    await (await openedDialog(alice.page, 'Approve this change')).getByRole('button', { name: 'Approve' }).click();
    await alice.page
      .getByRole('alert')
      .getByText(`#${id}: operator alice proposed change ${id} and cannot approve it; another admin must`)
      .waitFor();
    expect(await pays(first)).toBe(true);

    // Bob approves: the new keys pay, the first no longer; neither set of secrets stored in the clear.
    const bob = await operatorPage(platforms.admins.admin2);
    await go(bob.page, '#/merchants', 'Merchants');
    const bobsQueue = bob.page.getByRole('table', { name: 'Waiting for a second admin' });
    await bobsQueue.getByRole('button', { name: `Approve #${id}` }).click();
    const approved = bob.page.waitForResponse((r) => r.request().method() === 'POST' && /\/approve$/.test(r.url()));
    await (await openedDialog(bob.page, 'Approve this change')).getByRole('button', { name: 'Approve' }).click();
    expect((await approved).status()).toBe(200);
    await bobsQueue.getByRole('row', { name: new RegExp(mchid) }).waitFor({ state: 'detached' });
    await eventually('the new keys to pay', () => pays(next), 10_000);
    expect(await pays(first)).toBe(false);
    expect(await cleartext(first)).toEqual([]);
    expect(await cleartext(next)).toEqual([]);
    const [audits] = await pool.query<RowDataPacket[]>(
      `SELECT operator_id, action FROM admin_audit
        WHERE target IN (?, ?) OR (target = 'merchant:WECHATPAY:' AND JSON_SEARCH(request_body, 'one', ?) IS NOT NULL)
        ORDER BY id`,
      [`merchant:WECHATPAY:${mchid}`, `merchant-change:${id}`, mchid],
    );
    expect(audits.map((a) => `${a.operator_id} ${a.action}`)).toEqual([
      'alice MERCHANT_ACCOUNT_ADD_REFUSED',
      'alice MERCHANT_ACCOUNT_ADDED',
      'alice MERCHANT_ACCOUNT_CHANGE_PROPOSED',
      'alice MERCHANT_CHANGE_APPROVE_REFUSED',
      'bob MERCHANT_CHANGE_APPROVED',
    ]);
    await alice.context.close();
    await bob.context.close();
  });

  it('should show a viewer the directory with every control disabled', async () => {
    const { context, page } = await providerPage(platforms.admins.viewer);
    await page.getByText('Viewer: you can see everything and change nothing.').waitFor();
    const accounts = page.getByRole('table', { name: 'Accounts and sub-merchants' });
    await accounts.getByRole('row', { name: new RegExp(CONFIGURED_SUB) }).waitFor();
    const buttons = await accounts
      .getByRole('button', { name: /^(Propose to disable|Enable|Add a sub-merchant) / })
      .all();
    expect(buttons.length).toBeGreaterThanOrEqual(3);
    for (const button of buttons) expect(await button.isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Run the dry run' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Add an account' }).isDisabled()).toBe(true);
    expect(await page.getByLabel('Candidate (PEM: a public key or a certificate)').isDisabled()).toBe(true);
    await context.close();
  });

  it('should list the certificates that expire soonest on the overview, with their days left, under 30 highlighted, in English and in Chinese', async () => {
    const answer = (await providerClient.admin('GET', '/admin/overview', platforms.admins.viewer)).json<{
      expiringCredentials: Array<{ channel: string; account: string; kind: string; validTo: string }>;
    }>();
    expect(answer.expiringCredentials[0]).toMatchObject({
      channel: 'WECHATPAY',
      account: PROVIDER,
      kind: 'platformCert',
    });
    const { context, page } = await providerPage(platforms.admins.viewer);
    await page.goto(`${provider.url}/console/#/`);
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await page.getByText('Loading…').first().waitFor({ state: 'detached' });
    const table = page.getByRole('table', { name: 'Certificates expiring soonest' });
    const soonest = table.getByRole('row', { name: new RegExp(PROVIDER) });
    await expect(soonest.textContent()).resolves.toContain(en('platformCert'));
    await expect(soonest.locator('.days-left .days').textContent()).resolves.toBe(String(CERT_DAYS));
    await soonest.locator('.days-left.soon').getByText('Under 30 days').waitFor();
    await expect(soonest.locator('time').getAttribute('datetime')).resolves.toBe(answer.expiringCredentials[0].validTo);
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('heading', { name: '概览', level: 1 }).waitFor();
    const zh = page.getByRole('table', { name: '最先到期的证书' }).getByRole('row', { name: new RegExp(PROVIDER) });
    await zh.getByText('平台证书').waitFor();
    await zh.locator('.days-left.soon').getByText('不足 30 天').waitFor();
    await page.getByRole('button', { name: 'English' }).click();
    await context.close();

    // The suite's own service: its certificate has five years left, not highlighted.
    const own = await operatorPage(platforms.admins.viewer);
    const ownRow = own.page
      .getByRole('table', { name: 'Certificates expiring soonest' })
      .getByRole('row', { name: new RegExp(platforms.wechatpay.mchid) });
    expect(Number(await ownRow.locator('.days-left .days').textContent())).toBeGreaterThan(1000);
    expect(await ownRow.locator('.days-left.soon').count()).toBe(0);
    await own.context.close();
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
