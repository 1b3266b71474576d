import { Pool, RowDataPacket } from 'mysql2/promise';
import { AdminModule } from '../../src/admin/admin.module';
import { AdminQueries } from '../../src/admin/admin.queries';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { TradeModule } from '../../src/trade/trade.module';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { Intake } from '../support/medium-notify';
import { count, notificationsOnly, uniqueId } from '../support/test-app';
import { PlatformReply } from '../../src/channels/payment-channel';

const COPIES = 12;

interface DeliveryRow extends RowDataPacket {
  outcome: string;
  replays: number;
  bytes: number;
}

const acked = (answer: PlatformReply) => answer.status === 204;

/**
 * The same signed WeChat sending received again, on two replicas (two modules, each with its own
 * connection pool and memory, on one database): a replay, not a new delivery. Through the notify
 * route's use case.
 */
let setup: Medium;
let replicas: MediumContext[];
let intakes: Intake[];
let make: Factories;
let pool: Pool;

beforeAll(async () => {
  setup = await startMedium((p) => notificationsOnly(p.env), {
    imports: [OrderModule, TradeModule, NotifyModule, AdminModule],
    fake: false,
    replicas: 2,
  });
  ({ replicas, make, pool } = setup);
  intakes = replicas.map((r) => new Intake(r));
});

afterAll(() => setup?.close());

async function registeredPayment() {
  const { orderNo } = await make.order({ orderNo: uniqueId('RP'), amount: 1234 });
  return { orderNo, transactionId: uniqueId('T') };
}

async function deliveryRows(orderNo: string): Promise<DeliveryRow[]> {
  const [rows] = await pool.query<DeliveryRow[]>(
    'SELECT outcome, replays, LENGTH(raw_body) AS bytes FROM callback_delivery WHERE order_no = ? ORDER BY id',
    [orderNo],
  );
  return rows;
}

it(`should ack ${COPIES} copies arriving at once on two replicas, pay once, and keep the bytes once`, async () => {
  const { orderNo, transactionId } = await registeredPayment();
  const sending = make.deliveries.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1234 });

  const answers = await Promise.all(
    Array.from({ length: COPIES }, (_, i) => intakes[i % intakes.length].wechatpay(sending)),
  );

  expect(answers.filter((a) => !acked(a))).toEqual([]);
  const rows = await deliveryRows(orderNo);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ outcome: 'PAID', replays: COPIES - 1, bytes: Buffer.byteLength(sending.body) });
  expect(await count(pool, 'SELECT COUNT(*) FROM payment_callback WHERE transaction_id = ?', [transactionId])).toBe(1);
  expect(
    await count(pool, "SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'PAID'", [orderNo]),
  ).toBe(1);
  expect(
    await count(pool, "SELECT COUNT(*) FROM order_status_change WHERE order_no = ? AND to_status = 'PAID'", [orderNo]),
  ).toBe(1);
});

it('should count a replay arriving after the payment committed without storing it again', async () => {
  const { orderNo, transactionId } = await registeredPayment();
  const sending = make.deliveries.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1234 });
  expect(acked(await intakes[0].wechatpay(sending))).toBe(true);

  expect(acked(await intakes[1].wechatpay(sending))).toBe(true);
  expect(acked(await intakes[0].wechatpay(sending))).toBe(true);

  expect(await deliveryRows(orderNo)).toEqual([
    expect.objectContaining({ outcome: 'PAID', replays: 2, bytes: Buffer.byteLength(sending.body) }),
  ]);
});

it('should store a retry WeChat signed afresh (new timestamp and nonce) as a delivery of its own', async () => {
  const { orderNo, transactionId } = await registeredPayment();
  const first = make.deliveries.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1234 });
  const retry = make.deliveries.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1234 });
  expect(retry.headers['wechatpay-nonce']).not.toBe(first.headers['wechatpay-nonce']);

  expect(acked(await intakes[0].wechatpay(first))).toBe(true);
  expect(acked(await intakes[1].wechatpay(retry))).toBe(true);

  expect(await deliveryRows(orderNo)).toEqual([
    expect.objectContaining({ outcome: 'PAID', replays: 0 }),
    expect.objectContaining({ outcome: 'DUPLICATE', replays: 0 }),
  ]);
});

it('should count replays as deliveries in the admin view of the order', async () => {
  const { orderNo, transactionId } = await registeredPayment();
  const sending = make.deliveries.wechatpayPayment({ outTradeNo: orderNo, transactionId, total: 1234 });
  for (let i = 0; i < 3; i++) expect(acked(await intakes[i % 2].wechatpay(sending))).toBe(true);

  const detail = await replicas[0].get(AdminQueries).order(orderNo);
  expect(detail.deliveries).toMatchObject({ count: 3, items: [{ outcome: 'PAID' }] });
});
