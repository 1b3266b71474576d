import { Pool, RowDataPacket } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { DomainError } from '../../src/domain/domain-error';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { PaymentOrderService } from '../../src/order/payment-order.service';
import { loadDatabaseConfig } from '../../src/platform/config/database.config';
import { buildDataSourceOptions } from '../../src/platform/database/data-source-options';
import { BinaryIdentifiers1796700000000 } from '../../src/platform/database/migrations/1796700000000-BinaryIdentifiers';
import { yuan } from '../../tools/simulator/platform-signers';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { Intake } from '../support/medium-notify';
import { count, uniqueId } from '../support/test-app';
import { assertTestDatabase, databaseUrl, TEST_DATABASE_PREFIX, withAdminConnection } from '../support/test-database';

/**
 * Identifiers are byte strings to the channels: the service must not take two of them for one.
 * The order service's rules for order numbers, the payments of order numbers that differ only by
 * case or a trailing space (through the notify route's use case), the identifier columns'
 * collation and the migration that made them binary. A refusal's HTTP status is the DomainError's (`status`), which the
 * exception filter writes.
 */
const IDENTIFIER_COLUMNS = [
  'order_no',
  'transaction_id',
  'refund_no',
  'channel_refund_id',
  'merchant_id',
  'sub_merchant_id',
  'event_id',
];
const BINARY_NO_PAD = process.env.TEST_DATABASE_SERVER === 'mariadb' ? 'utf8mb4_nopad_bin' : 'utf8mb4_0900_bin';

let setup: Medium;
let ctx: MediumContext;
let make: Factories;
let intake: Intake;
let pool: Pool;

beforeAll(async () => {
  setup = await startMedium({}, { imports: [OrderModule, NotifyModule], fake: false });
  ({ ctx, make, pool } = setup);
  intake = new Intake(ctx);
});

afterAll(() => setup?.close());

function swapCase(text: string): string {
  return [...text].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
}

/** Registers as POST /payment-orders does: the order, or the DomainError the route answers with. */
function register(orderNo: string, amount: number, channel?: 'WECHATPAY' | 'ALIPAY') {
  return ctx.inContext(() =>
    ctx.get(PaymentOrderService).register({ orderNo, amount, userId: 'u-1', currency: 'CNY', channel }),
  );
}

describe('order numbers that differ only by case', () => {
  it('should be two orders, each paid by its own payment, with no duplicate-payment anomaly', async () => {
    const lower = `${uniqueId('case')}aB3`;
    const upper = swapCase(lower);
    expect((await register(lower, 300)).created).toBe(true);
    const second = await register(upper, 400);
    expect(second.created).toBe(true);
    expect(second.order).toMatchObject({ orderNo: upper, amount: 400 });

    const paidUpper = await intake.wechatpay(
      make.deliveries.wechatpayPayment({ outTradeNo: upper, transactionId: uniqueId('T'), total: 400 }),
    );
    const paidLower = await intake.alipay(
      make.deliveries.alipayPayment({ outTradeNo: lower, tradeNo: uniqueId('T'), totalAmount: yuan(300) }),
    );

    expect([paidUpper.status, paidLower.status]).toEqual([204, 200]);
    const [orders] = await pool.query<RowDataPacket[]>(
      'SELECT order_no, status, amount FROM payment_order WHERE order_no IN (?, ?) ORDER BY amount',
      [lower, upper],
    );
    expect(orders.map((o) => ({ ...o }))).toEqual([
      { order_no: lower, status: 'PAID', amount: 300 },
      { order_no: upper, status: 'PAID', amount: 400 },
    ]);
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_anomaly WHERE order_no IN (?, ?)', [lower, upper])).toBe(0);
  });

  it('should not let a payment for the order number with a trailing space pay the order', async () => {
    const orderNo = uniqueId('pad');
    expect((await register(orderNo, 500)).created).toBe(true);

    await intake.alipay(
      make.deliveries.alipayPayment({ outTradeNo: `${orderNo} `, tradeNo: uniqueId('T'), totalAmount: yuan(500) }),
    );

    expect(
      await count(pool, "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'WAIT_PAY'", [orderNo]),
    ).toBe(1);
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no = ?', [orderNo])).toBe(0);
  });

  it('should make every identifier column binary and NO PAD', async () => {
    const [rows] = await pool.query<RowDataPacket[]>(
      `SELECT CONCAT(TABLE_NAME, '.', COLUMN_NAME) AS name, COLLATION_NAME AS collation FROM information_schema.COLUMNS
       WHERE TABLE_SCHEMA = DATABASE() AND COLUMN_NAME IN (?) AND DATA_TYPE IN ('char', 'varchar')
         AND TABLE_NAME <> 'test_handler_effect'`, // the suites' own handler table (test/support), not the service's
      [IDENTIFIER_COLUMNS],
    );

    expect(rows.length).toBeGreaterThanOrEqual(20);
    expect(rows.filter((r) => r.collation !== BINARY_NO_PAD).map((r) => `${r.name} ${r.collation}`)).toEqual([]);
  });
});

type NamedOrderNo = [name: string, channel: 'WECHATPAY' | 'ALIPAY', build: () => string];

describe('order numbers the channel would refuse', () => {
  const base = () => uniqueId('R').padEnd(20, '0').slice(0, 20);
  it.each([
    ['WeChat Pay, 5 characters', 'WECHATPAY', () => 'A1234'],
    ['WeChat Pay, 33 characters', 'WECHATPAY', () => `${base()}${'x'.repeat(13)}`],
    ['Alipay, a hyphen', 'ALIPAY', () => `${base()}-1`],
  ] as NamedOrderNo[])(
    'should refuse %s with 400 naming the rule, and create nothing',
    async (_name, channel, build) => {
      const orderNo = build();

      const refusal = register(orderNo, 100, channel);

      await expect(refusal).rejects.toBeInstanceOf(DomainError);
      const error = (await refusal.catch((e: unknown) => e)) as DomainError;
      expect(error.status).toBe(400);
      expect(error.message).toMatch(new RegExp(`${channel === 'ALIPAY' ? 'Alipay' : 'WeChat Pay'}.*orderNo`));
      expect(await count(pool, 'SELECT COUNT(*) FROM payment_order WHERE order_no = ?', [orderNo])).toBe(0);
    },
  );

  it.each([
    ['WeChat Pay, 6 characters', 'WECHATPAY', () => 'A12345'],
    ['WeChat Pay, 32 characters with - and _', 'WECHATPAY', () => `${base()}-_${'x'.repeat(10)}`],
    ['Alipay, 64 characters with _', 'ALIPAY', () => `${base()}_${'y'.repeat(43)}`],
  ] as NamedOrderNo[])('should accept %s', async (_name, channel, build) => {
    const orderNo = build();

    expect((await register(orderNo, 100, channel)).created).toBe(true);
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_order WHERE order_no = ?', [orderNo])).toBe(1);
  });

  it('should refuse, without a channel, an order number that no channel takes', async () => {
    const orderNo = 'A-1';

    await expect(register(orderNo, 100)).rejects.toMatchObject({ status: 400 });
    expect(await count(pool, 'SELECT COUNT(*) FROM payment_order WHERE order_no = ?', [orderNo])).toBe(0);
  });
});
describe('the migration to binary identifiers', () => {
  const name = assertTestDatabase(uniqueId(`${TEST_DATABASE_PREFIX}ids_`).toLowerCase());
  let dataSource: DataSource;
  const migration = new BinaryIdentifiers1796700000000();
  const collationOf = async (table: string, column: string) =>
    (
      await dataSource.query<Array<{ c: string }>>(
        `SELECT COLLATION_NAME AS c FROM information_schema.COLUMNS
         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?`,
        [table, column],
      )
    )[0].c;
  const now = new Date();

  beforeAll(async () => {
    await withAdminConnection((conn) =>
      conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`),
    );
    const url = databaseUrl(name);
    dataSource = await new DataSource(buildDataSourceOptions({ ...loadDatabaseConfig(), url })).initialize();
    await dataSource.runMigrations();
    // Back to the schema before this migration, holding what the old collation let in.
    await migration.down(dataSource.createQueryRunner());
    await dataSource.query(
      `INSERT INTO payment_order (order_no, user_id, amount, currency, status, created_at, updated_at)
       VALUES ('ORDaB3', 'u', 100, 'CNY', 'PAID', ?, ?), ('PADDED', 'u', 100, 'CNY', 'WAIT_PAY', ?, ?)`,
      [now, now, now, now],
    );
    await dataSource.query(
      `INSERT INTO order_status_change (order_no, to_status, event, changed_at)
       VALUES ('ORDAb3', 'PAID', 'PAY', ?), ('PADDED ', 'WAIT_PAY', 'CREATE', ?)`,
      [now, now],
    );
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await withAdminConnection((conn) => conn.query(`DROP DATABASE IF EXISTS \`${name}\``));
  });

  it('should stop, naming identifiers that differ only by case or trailing space, and change nothing', async () => {
    const attempt = migration.up(dataSource.createQueryRunner());

    await expect(attempt).rejects.toThrow(/"ORDAb3" vs "ORDaB3"/);
    await expect(migration.up(dataSource.createQueryRunner())).rejects.toThrow(/"PADDED" vs "PADDED "/);
    expect(await collationOf('payment_order', 'order_no')).toBe('utf8mb4_unicode_ci');
    expect(
      Number((await dataSource.query<Array<{ n: string }>>('SELECT COUNT(*) AS n FROM order_status_change'))[0].n),
    ).toBe(2);
    expect(Number((await dataSource.query<Array<{ n: string }>>('SELECT COUNT(*) AS n FROM payment_order'))[0].n)).toBe(
      2,
    );
  });

  it('should go through once an operator has sorted them out', async () => {
    await dataSource.query(`UPDATE order_status_change SET order_no = 'ORDaB3' WHERE order_no = 'ORDAb3'`);
    await dataSource.query(`DELETE FROM order_status_change WHERE order_no = 'PADDED '`);

    await migration.up(dataSource.createQueryRunner());

    expect(await collationOf('payment_order', 'order_no')).toBe(BINARY_NO_PAD);
    expect(await collationOf('order_status_change', 'order_no')).toBe(BINARY_NO_PAD);
    expect(await collationOf('refund', 'refund_no')).toBe(BINARY_NO_PAD);
  });
});
