import { createHash } from 'node:crypto';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { AdminModule } from '../../src/admin/admin.module';
import { Channel } from '../../src/domain/notification';
import { NotifyModule } from '../../src/intake/notify.module';
import { AuditLog } from '../../src/operators/audit/audit-log';
import { OrderModule } from '../../src/order/order.module';
import { PaymentOrderService } from '../../src/order/payment-order.service';
import { loadDatabaseConfig } from '../../src/platform/config/database.config';
import { buildDataSourceOptions } from '../../src/platform/database/data-source-options';
import { MerchantAddedOnce1797810000000 } from '../../src/platform/database/migrations/1797810000000-MerchantAddedOnce';
import { MerchantChange } from '../../src/payments/merchants/merchant-change.entity';
import { MerchantChanges } from '../../src/payments/merchants/merchant-changes';
import { DIRECTORY_POLL_MS, MerchantDirectory } from '../../src/payments/merchants/merchant-directory';
import { wechatpayDelivery } from '../../tools/simulator/platform-signers';
import { wechatpayPartnerTransaction } from '../../tools/simulator/wechatpay/partner-resources';
import { eventually, sleep } from '../support/eventually';
import { domainFailure, Medium, MediumContext, startMedium, theOneThatWon } from '../support/medium';
import { FORM, receive } from '../support/medium-intake';
import { createWechatpayAccount, WechatpayTestAccount } from '../support/merchant-accounts';
import { uniqueId } from '../support/test-app';
import { assertTestDatabase, databaseUrl, TEST_DATABASE_PREFIX, withAdminConnection } from '../support/test-database';

/**
 * The merchant directory on two replicas of the service sharing one database: what an operator
 * adds or disables through the use case the admin routes call (MerchantChanges) reaches the
 * notifications of both replicas within a poll of the directory's version, without a restart;
 * disabling waits for a second admin; every change is a row of the append-only history with its
 * audit row.
 */
const SP_MCHID = '1230000109';
const SP_APPID = 'wx8888888888888888';
const SUB_A = '1900000109';
const SUB_NEW = '1900000777';
const SUB_APPID = 'wxd678efh567hg6999';

let setup: Medium;
let provider: WechatpayTestAccount;
let pool: Pool;

beforeAll(async () => {
  provider = createWechatpayAccount(SP_MCHID, [SP_APPID]);
  setup = await startMedium(
    (platforms) => ({
      ...Object.fromEntries(Object.entries(platforms.env).filter(([name]) => !name.startsWith('WECHATPAY_'))),
      WECHATPAY_MCHID: SP_MCHID,
      WECHATPAY_APPIDS: SP_APPID,
      WECHATPAY_SUB_MCHIDS: SUB_A,
      WECHATPAY_APIV3_KEY: provider.apiV3Key,
      WECHATPAY_PUBLIC_KEY_ID: provider.signer.serial,
      WECHATPAY_PUBLIC_KEY_PATH: provider.publicKeyPath,
    }),
    // The directory is the database's: a disabled account here must not reach another suite's.
    { imports: [OrderModule, NotifyModule, AdminModule], fake: false, replicas: 2, ownDatabase: true },
  );
  ({ pool } = setup);
});

afterAll(() => setup?.close());

const changes = (ctx: MediumContext = setup.ctx) => ctx.get(MerchantChanges);
/** The admin route's audit row, written in the change's transaction. */
const audited = (ctx: MediumContext, operatorId: string, action: string) => (change: MerchantChange) =>
  ctx.get(AuditLog).record({
    operatorId,
    action,
    target: `merchant:${change.channel}:${change.accountId}`,
    requestBody: null,
    result: { changeId: change.id },
  });

async function order(ctx: MediumContext, amount = 100): Promise<{ orderNo: string; amount: number }> {
  const orderNo = uniqueId('MD');
  await ctx.inContext(() => ctx.get(PaymentOrderService).register({ orderNo, userId: 'u-1', amount, currency: 'CNY' }));
  return { orderNo, amount };
}

function partnerPayment(p: { orderNo: string; amount: number }, subMchid: string) {
  return wechatpayDelivery(provider.signer, {
    resource: wechatpayPartnerTransaction({
      spMchid: SP_MCHID,
      subMchid,
      spAppid: SP_APPID,
      subAppid: SUB_APPID,
      outTradeNo: p.orderNo,
      transactionId: uniqueId('42'),
      total: p.amount,
    }),
  });
}

const wechatpay = (ctx: MediumContext, d: { headers: Record<string, string>; body: string }) =>
  receive(ctx, 'wechatpay', { 'content-type': 'application/json', ...d.headers }, d.body);

function alipayPayment(p: { orderNo: string; amount: number }): string {
  return setup.make.deliveries.alipayPayment({
    outTradeNo: p.orderNo,
    tradeNo: uniqueId('T'),
    totalAmount: (p.amount / 100).toFixed(2),
  });
}
const alipay = (ctx: MediumContext, form: string) => receive(ctx, 'alipay', { 'content-type': FORM }, form);
const alipayAcked = (r: { status: number; body: string }) => r.status === 200 && r.body === 'success';

async function status(orderNo: string): Promise<string> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT status FROM payment_order WHERE order_no = ?', [orderNo]);
  return String(rows[0]?.status);
}

async function kept(channel: string, body: string): Promise<string[]> {
  const [rows] = await pool.query<RowDataPacket[]>(
    'SELECT reason FROM refused_notification WHERE channel = ? AND body_sha256 = ?',
    [channel, createHash('sha256').update(body, 'utf8').digest()],
  );
  return rows.map((r) => String(r.reason));
}

async function auditCount(action: string): Promise<number> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM admin_audit WHERE action = ?', [action]);
  return Number(rows[0].n);
}

/** Every replica holds the directory at least at `version`. */
const reachedEveryReplica = (version: string) =>
  eventually(
    `every replica at directory version ${version}`,
    () => setup.replicas.every((ctx) => BigInt(ctx.get(MerchantDirectory).current.version) >= BigInt(version)),
    10_000,
  );

describe('the merchant directory at runtime', () => {
  it('should pay a sub-merchant added through the directory on both replicas within a poll, with its sub_appid checked', async () => {
    const before = await order(setup.ctx);
    const refusedBefore = partnerPayment(before, SUB_NEW);
    expect((await wechatpay(setup.replicas[1], refusedBefore)).status).toBe(401);
    expect(await kept(Channel.Wechatpay, refusedBefore.body)).toEqual(['MerchantMismatch']);

    const added = await changes().addSubMerchant(
      { channel: Channel.Wechatpay, account: SP_MCHID, subMerchantId: SUB_NEW },
      SUB_APPID,
      'alice',
      audited(setup.ctx, 'alice', 'MERCHANT_SUB_MERCHANT_ADDED'),
    );
    const committedAt = Date.now();
    await reachedEveryReplica(added.id);
    // The stated delay: one poll and its query (DIRECTORY_POLL_MS), with room for this loaded machine.
    expect(Date.now() - committedAt).toBeLessThan(5 * DIRECTORY_POLL_MS);

    for (const ctx of setup.replicas) {
      const p = await order(ctx);
      expect(await wechatpay(ctx, partnerPayment(p, SUB_NEW))).toMatchObject({ status: 204, body: '' });
      expect(await status(p.orderNo)).toBe('PAID');
      expect(
        changes(ctx)
          .list()
          .find((a) => a.account === SP_MCHID)?.subMerchants,
      ).toEqual([
        { subMerchantId: SUB_A, source: 'configuration', disabled: false },
        { subMerchantId: SUB_NEW, subAppId: SUB_APPID, source: 'directory', disabled: false },
      ]);
    }
    // The same sub-merchant twice is refused and writes nothing.
    expect(
      await domainFailure(
        changes(setup.replicas[1]).addSubMerchant(
          { channel: Channel.Wechatpay, account: SP_MCHID, subMerchantId: SUB_NEW },
          undefined,
          'bob',
        ),
      ),
    ).toMatchObject({ code: 'MerchantConflict', status: 409 });
    expect(await auditCount('MERCHANT_SUB_MERCHANT_ADDED')).toBe(1);
    const [rows] = await pool.query<RowDataPacket[]>(
      'SELECT action, sub_app_id FROM merchant_change WHERE sub_merchant_id = ?',
      [SUB_NEW],
    );
    expect(rows).toEqual([{ action: 'SUB_MERCHANT_ADDED', sub_app_id: SUB_APPID }]);
  });

  it('should add a sub-merchant once of five adds at once on two replicas, the others 409 writing nothing, with the sub_appid of the one added', async () => {
    const subMerchantId = '1900000888';
    const subAppIdOf = (i: number) => `wxd678efh567hg700${i}`;
    const changeRows = () =>
      pool
        .query<RowDataPacket[]>('SELECT id FROM merchant_change WHERE sub_merchant_id = ?', [subMerchantId])
        .then(([rows]) => rows.map((r) => String(r.id)));
    const auditsBefore = await auditCount('MERCHANT_SUB_MERCHANT_ADDED');
    // Each add's audit row takes a while: every add reads the directory and passes its check while the first's transaction is open.
    const added = await theOneThatWon(
      [0, 1, 2, 3, 4].map((i) => {
        const ctx = setup.replicas[i % 2];
        return changes(ctx).addSubMerchant(
          { channel: Channel.Wechatpay, account: SP_MCHID, subMerchantId },
          subAppIdOf(i),
          `admin-${i}`,
          async (change) => {
            await sleep(1000);
            await audited(ctx, `admin-${i}`, 'MERCHANT_SUB_MERCHANT_ADDED')(change);
          },
        );
      }),
      { code: 'MerchantConflict', status: 409, message: `${subMerchantId} is a sub-merchant of ${SP_MCHID} already` },
    );

    expect(await changeRows()).toEqual([added.id]);
    expect(await auditCount('MERCHANT_SUB_MERCHANT_ADDED')).toBe(auditsBefore + 1);
    const [claims] = await pool.query<Array<RowDataPacket & { account_id: string; change_id: number }>>(
      'SELECT account_id, change_id FROM merchant_added WHERE sub_merchant_id = ?',
      [subMerchantId],
    );
    expect(claims.map((c) => [c.account_id, String(c.change_id)])).toEqual([[SP_MCHID, added.id]]);

    await reachedEveryReplica(added.id);
    for (const ctx of setup.replicas) {
      expect(
        changes(ctx)
          .list()
          .find((a) => a.account === SP_MCHID)
          ?.subMerchants.filter((s) => s.subMerchantId === subMerchantId),
      ).toEqual([{ subMerchantId, subAppId: added.subAppId, source: 'directory', disabled: false }]);
    }
  });

  it("should refuse a sub-merchant's notification naming another sub_appid than the one added", async () => {
    const p = await order(setup.ctx);
    const delivery = wechatpayDelivery(provider.signer, {
      resource: wechatpayPartnerTransaction({
        spMchid: SP_MCHID,
        subMchid: SUB_NEW,
        spAppid: SP_APPID,
        subAppid: 'wx0000000000000bad',
        outTradeNo: p.orderNo,
        transactionId: uniqueId('42'),
        total: p.amount,
      }),
    });
    expect((await wechatpay(setup.replicas[1], delivery)).status).toBe(401);
    expect(await status(p.orderNo)).toBe('WAIT_PAY');
  });

  it("should keep paying a proposed disable until a second admin approves it, then refuse and keep the account's notifications on both replicas", async () => {
    const appId = setup.platforms.alipay.appId;
    const proposal = await changes().proposeDisable(
      { channel: Channel.Alipay, account: appId },
      'contract ended',
      'alice',
      audited(setup.ctx, 'alice', 'MERCHANT_DISABLE_PROPOSED'),
    );
    // A proposal changes nothing: both replicas still pay.
    await reachedEveryReplica(proposal.id);
    for (const ctx of setup.replicas) {
      const p = await order(ctx);
      expect(alipayAcked(await alipay(ctx, alipayPayment(p)))).toBe(true);
    }
    // Four eyes: the proposer cannot approve, and the refusal writes nothing.
    expect(await domainFailure(changes().approve(proposal.id, 'alice'))).toMatchObject({
      code: 'Forbidden',
      status: 403,
    });

    // Two other admins at once, on the two replicas: exactly one approval is written.
    const approval = await theOneThatWon(
      [
        changes(setup.replicas[0]).approve(
          proposal.id,
          'bob',
          audited(setup.replicas[0], 'bob', 'MERCHANT_CHANGE_APPROVED'),
        ),
        changes(setup.replicas[1]).approve(
          proposal.id,
          'carol',
          audited(setup.replicas[1], 'carol', 'MERCHANT_CHANGE_APPROVED'),
        ),
      ],
      { code: 'MerchantConflict' },
    );
    const [decisions] = await pool.query<RowDataPacket[]>(
      'SELECT action FROM merchant_change WHERE decides_change_id = ?',
      [proposal.id],
    );
    expect(decisions).toEqual([{ action: 'APPROVED' }]);
    expect(await auditCount('MERCHANT_CHANGE_APPROVED')).toBe(1);

    await reachedEveryReplica(approval.id);
    for (const ctx of setup.replicas) {
      const p = await order(ctx);
      const form = alipayPayment(p);
      expect(alipayAcked(await alipay(ctx, form))).toBe(false);
      expect(await status(p.orderNo)).toBe('WAIT_PAY');
      expect(await kept(Channel.Alipay, form)).toEqual(['MerchantMismatch']);
    }

    // Enabling again needs no second admin, and pays again on both.
    const enabled = await changes(setup.replicas[1]).enable({ channel: Channel.Alipay, account: appId }, 'alice');
    await reachedEveryReplica(enabled.id);
    for (const ctx of setup.replicas) {
      const p = await order(ctx);
      expect(alipayAcked(await alipay(ctx, alipayPayment(p)))).toBe(true);
    }
  });

  it('should disable one sub-merchant alone, and let a rejected proposal change nothing', async () => {
    const rejected = await changes().proposeDisable(
      { channel: Channel.Wechatpay, account: SP_MCHID, subMerchantId: SUB_NEW },
      'suspected fraud',
      'alice',
    );
    await changes(setup.replicas[1]).reject(rejected.id, 'alice', 'withdrawn');
    expect(await domainFailure(changes().approve(rejected.id, 'bob'))).toMatchObject({ code: 'MerchantConflict' });

    const proposal = await changes().proposeDisable(
      { channel: Channel.Wechatpay, account: SP_MCHID, subMerchantId: SUB_A },
      'suspected fraud',
      'alice',
    );
    const approval = await changes(setup.replicas[1]).approve(proposal.id, 'bob');
    await reachedEveryReplica(approval.id);
    for (const ctx of setup.replicas) {
      const disabled = await order(ctx);
      const refused = partnerPayment(disabled, SUB_A);
      expect((await wechatpay(ctx, refused)).status).toBe(401);
      expect(await kept(Channel.Wechatpay, refused.body)).toEqual(['MerchantMismatch']);
      const other = await order(ctx);
      expect((await wechatpay(ctx, partnerPayment(other, SUB_NEW))).status).toBe(204);
    }
  });
});

describe('the migration that adds each account and sub-merchant once', () => {
  const name = assertTestDatabase(uniqueId(`${TEST_DATABASE_PREFIX}added_`).toLowerCase());
  const migration = new MerchantAddedOnce1797810000000();
  let dataSource: DataSource;
  const row = (id: number, accountId: string, subMerchantId: string, action: string) => [
    id,
    'WECHATPAY',
    accountId,
    subMerchantId,
    action,
    'alice',
    new Date(),
  ];

  beforeAll(async () => {
    await withAdminConnection((conn) =>
      conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`),
    );
    dataSource = await new DataSource(
      buildDataSourceOptions({ ...loadDatabaseConfig(), url: databaseUrl(name) }),
    ).initialize();
    await dataSource.runMigrations();
    // Back to the schema before it, with the history concurrent adds could write then.
    await migration.down(dataSource.createQueryRunner());
    await dataSource.query(
      'INSERT INTO merchant_change (id, channel, account_id, sub_merchant_id, action, operator_id, created_at) VALUES ?',
      [
        [
          row(11, '1900009001', '', 'ACCOUNT_ADDED'),
          row(12, '1900009001', '', 'ACCOUNT_ADDED'),
          row(13, '1900009001', '', 'ACCOUNT_CHANGE_PROPOSED'),
          row(14, '1230000109', '1900000201', 'SUB_MERCHANT_ADDED'),
          row(15, '1230000109', '1900000202', 'SUB_MERCHANT_ADDED'),
          row(16, '1230000109', '1900000201', 'SUB_MERCHANT_ADDED'),
          row(17, 'abcDEF', '', 'ACCOUNT_ADDED'),
          row(18, 'ABCdef', '', 'ACCOUNT_ADDED'),
          row(19, '1230000109', '1900000202', 'DISABLE_PROPOSED'),
        ],
      ],
    );
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await withAdminConnection((conn) => conn.query(`DROP DATABASE IF EXISTS \`${name}\``));
  });

  it('should keep the earliest of the adds the history holds twice, and ids that differ by case apart', async () => {
    await migration.up(dataSource.createQueryRunner());

    const claims = await dataSource.query<Array<Record<string, string>>>(
      'SELECT channel, account_id, sub_merchant_id, change_id FROM merchant_added ORDER BY change_id',
    );
    expect(claims.map((c) => [c.account_id, c.sub_merchant_id, String(c.change_id)])).toEqual([
      ['1900009001', '', '11'],
      ['1230000109', '1900000201', '14'],
      ['1230000109', '1900000202', '15'],
      ['abcDEF', '', '17'],
      ['ABCdef', '', '18'],
    ]);
    // Nothing of the history changed.
    expect(
      Number((await dataSource.query<Array<{ n: string }>>('SELECT COUNT(*) AS n FROM merchant_change'))[0].n),
    ).toBe(9);
  });

  it('should drop the table going down', async () => {
    await migration.down(dataSource.createQueryRunner());
    const tables = await dataSource.query<unknown[]>(
      "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'merchant_added'",
    );
    expect(tables).toEqual([]);
  });
});
