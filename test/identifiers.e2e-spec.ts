import { RowDataPacket } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { loadDatabaseConfig } from '../src/platform/config/database.config';
import { buildDataSourceOptions } from '../src/platform/database/data-source-options';
import { BinaryIdentifiers1796700000000 } from '../src/platform/database/migrations/1796700000000-BinaryIdentifiers';
import { yuan } from '../tools/simulator/platform-signers';
import { count, uniqueId } from './support/test-app';
import { suiteApp } from './support/suite-app';
import { assertTestDatabase, databaseUrl, TEST_DATABASE_PREFIX, withAdminConnection } from './support/test-database';

/** Identifiers are byte strings to the channels: the service must not take two of them for one. */
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

function swapCase(text: string): string {
  return [...text].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
}

const suite = suiteApp();

describe('order numbers that differ only by case', () => {
  it('should be two orders, each paid by its own payment, with no duplicate-payment anomaly', async () => {
    const lower = `${uniqueId('case')}aB3`;
    const upper = swapCase(lower);
    expect((await suite.client.registerOrder({ orderNo: lower, amount: 300 })).status).toBe(201);
    const second = await suite.client.registerOrder({ orderNo: upper, amount: 400 });
    expect(second.status).toBe(201);
    expect(second.json()).toMatchObject({ orderNo: upper, amount: 400 });

    const paidUpper = await suite.client.postWechatpay(
      suite.client.wechatpayPayment({ outTradeNo: upper, transactionId: uniqueId('T'), total: 400 }),
    );
    const paidLower = await suite.client.postAlipay(
      suite.client.alipayPayment({ outTradeNo: lower, tradeNo: uniqueId('T'), totalAmount: yuan(300) }),
    );

    expect([paidUpper.status, paidLower.status]).toEqual([204, 200]);
    const [orders] = await suite.pool.query<RowDataPacket[]>(
      'SELECT order_no, status, amount FROM payment_order WHERE order_no IN (?, ?) ORDER BY amount',
      [lower, upper],
    );
    expect(orders.map((o) => ({ ...o }))).toEqual([
      { order_no: lower, status: 'PAID', amount: 300 },
      { order_no: upper, status: 'PAID', amount: 400 },
    ]);
    expect(
      await count(suite.pool, 'SELECT COUNT(*) FROM payment_anomaly WHERE order_no IN (?, ?)', [lower, upper]),
    ).toBe(0);
  });

  it('should not let a payment for the order number with a trailing space pay the order', async () => {
    const orderNo = uniqueId('pad');
    expect((await suite.client.registerOrder({ orderNo, amount: 500 })).status).toBe(201);

    await suite.client.postAlipay(
      suite.client.alipayPayment({ outTradeNo: `${orderNo} `, tradeNo: uniqueId('T'), totalAmount: yuan(500) }),
    );

    expect(
      await count(suite.pool, "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'WAIT_PAY'", [
        orderNo,
      ]),
    ).toBe(1);
    expect(await count(suite.pool, 'SELECT COUNT(*) FROM payment_callback WHERE order_no = ?', [orderNo])).toBe(0);
  });

  it('should make every identifier column binary and NO PAD', async () => {
    const [rows] = await suite.pool.query<RowDataPacket[]>(
      `SELECT CONCAT(TABLE_NAME, '.', COLUMN_NAME) AS name, COLLATION_NAME AS collation FROM information_schema.COLUMNS
       WHERE TABLE_SCHEMA = DATABASE() AND COLUMN_NAME IN (?) AND DATA_TYPE IN ('char', 'varchar')
         AND TABLE_NAME <> 'test_handler_effect'`, // the suites' own handler table (test/support), not the service's
      [IDENTIFIER_COLUMNS],
    );

    expect(rows.length).toBeGreaterThanOrEqual(20);
    expect(rows.filter((r) => r.collation !== BINARY_NO_PAD).map((r) => `${r.name} ${r.collation}`)).toEqual([]);
  });
});

describe('order numbers the channel would refuse', () => {
  const base = () => uniqueId('R').padEnd(20, '0').slice(0, 20);
  it.each([
    ['WeChat Pay, 5 characters', 'WECHATPAY', () => 'A1234'],
    ['WeChat Pay, 33 characters', 'WECHATPAY', () => `${base()}${'x'.repeat(13)}`],
    ['Alipay, a hyphen', 'ALIPAY', () => `${base()}-1`],
  ])('should refuse %s with 400 naming the rule, and create nothing', async (_name, channel, make) => {
    const orderNo = make();

    const answer = await suite.client.registerOrder({ orderNo, amount: 100, channel });

    expect(answer.status).toBe(400);
    expect(answer.json().message).toMatch(new RegExp(`${channel === 'ALIPAY' ? 'Alipay' : 'WeChat Pay'}.*orderNo`));
    expect(await count(suite.pool, 'SELECT COUNT(*) FROM payment_order WHERE order_no = ?', [orderNo])).toBe(0);
  });

  it.each([
    ['WeChat Pay, 6 characters', 'WECHATPAY', () => 'A12345'],
    ['WeChat Pay, 32 characters with - and _', 'WECHATPAY', () => `${base()}-_${'x'.repeat(10)}`],
    ['Alipay, 64 characters with _', 'ALIPAY', () => `${base()}_${'y'.repeat(43)}`],
  ])('should accept %s', async (_name, channel, make) => {
    const orderNo = make();

    expect((await suite.client.registerOrder({ orderNo, amount: 100, channel })).status).toBe(201);
    expect(await count(suite.pool, 'SELECT COUNT(*) FROM payment_order WHERE order_no = ?', [orderNo])).toBe(1);
  });

  it('should refuse, without a channel, an order number that no channel takes', async () => {
    const orderNo = 'A-1';

    const answer = await suite.client.registerOrder({ orderNo, amount: 100 });

    expect(answer.status).toBe(400);
    expect(await count(suite.pool, 'SELECT COUNT(*) FROM payment_order WHERE order_no = ?', [orderNo])).toBe(0);
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
