import { Pool, RowDataPacket } from 'mysql2/promise';
import { PlatformReply } from '../../src/channels/payment-channel';
import { DomainError } from '../../src/domain/domain-error';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { TradeCloseService } from '../../src/trade/trade-close.service';
import { TradeModule } from '../../src/trade/trade.module';
import { eventually } from '../support/eventually';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { acked, Intake } from '../support/medium-notify';
import { count, notificationsOnly, uniqueId } from '../support/test-app';

const ORDERS = 200;
const DELIVERIES_PER_PAYMENT = 8;
const PAYMENTS_IN_FLIGHT = 25;

interface Payment {
  orderNo: string;
  transactionId: string;
  channel: 'WECHATPAY' | 'ALIPAY';
}

/**
 * Exactly once under concurrent duplicate deliveries, through the notify route's use case
 * (NotificationIntake) of two replicas: two modules, each with its own connection pool and memory,
 * sharing one database. A close's
 * outcome is the status the order API would answer (200, or its DomainError's 409).
 */
let setup: Medium;
let replicas: MediumContext[];
let intakes: Intake[];
let make: Factories;
let pool: Pool;

beforeAll(async () => {
  setup = await startMedium((p) => notificationsOnly(p.env), {
    imports: [OrderModule, TradeModule, NotifyModule],
    fake: false,
    replicas: 2,
  });
  ({ replicas, make, pool } = setup);
  intakes = replicas.map((r) => new Intake(r));
});

afterAll(() => setup?.close());

/** Every delivery of one payment fired at the same moment, spread over both replicas. */
function deliverConcurrently(payment: Payment, amountFen: number): Promise<PlatformReply[]> {
  return Promise.all(
    Array.from({ length: DELIVERIES_PER_PAYMENT }, (_, i) => {
      const intake = intakes[i % intakes.length];
      if (payment.channel === 'WECHATPAY') {
        // WeChat signs each retry afresh: new nonce and timestamp, same transaction.
        return intake.wechatpay(
          make.deliveries.wechatpayPayment({
            outTradeNo: payment.orderNo,
            transactionId: payment.transactionId,
            total: amountFen,
          }),
        );
      }
      return intake.alipay(
        make.deliveries.alipayPayment({
          outTradeNo: payment.orderNo,
          tradeNo: payment.transactionId,
          totalAmount: '12.34',
        }),
      );
    }),
  );
}

/** The order API's status for a close on `replica`: 200, or the DomainError's. */
async function closeStatus(replica: MediumContext, orderNo: string): Promise<number> {
  try {
    await replica.inContext(() => replica.get(TradeCloseService).close(orderNo));
    return 200;
  } catch (error) {
    if (error instanceof DomainError) return error.status;
    throw error;
  }
}

it(`should pay each of ${ORDERS} orders exactly once when every payment arrives ${DELIVERIES_PER_PAYMENT} times at once`, async () => {
  const payments: Payment[] = Array.from({ length: ORDERS }, (_, i) => ({
    orderNo: uniqueId('C'),
    transactionId: uniqueId('T'),
    channel: i % 2 === 0 ? 'WECHATPAY' : 'ALIPAY',
  }));
  for (const p of payments) await make.order({ orderNo: p.orderNo, amount: 1234 });

  const answers: PlatformReply[] = [];
  for (let i = 0; i < payments.length; i += PAYMENTS_IN_FLIGHT) {
    const batch = payments.slice(i, i + PAYMENTS_IN_FLIGHT);
    answers.push(...(await Promise.all(batch.map((p) => deliverConcurrently(p, 1234)))).flat());
  }

  const failures = answers.filter((a) => !acked(a));
  expect(failures).toEqual([]);
  expect(answers).toHaveLength(ORDERS * DELIVERIES_PER_PAYMENT);

  const orderNos = payments.map((p) => p.orderNo);
  expect(
    await count(pool, `SELECT COUNT(*) FROM payment_order WHERE status = 'PAID' AND order_no IN (?)`, [orderNos]),
  ).toBe(ORDERS);
  const [events] = await pool.query<RowDataPacket[]>(
    `SELECT order_no, COUNT(*) AS n FROM outbox_event WHERE order_no IN (?) GROUP BY order_no`,
    [orderNos],
  );
  expect(events).toHaveLength(ORDERS);
  expect(events.every((e) => Number(e.n) === 1)).toBe(true);
  const [transitions] = await pool.query<RowDataPacket[]>(
    `SELECT order_no, SUM(outcome = 'PAID') AS paid, SUM(outcome = 'DUPLICATE') AS duplicates
     FROM callback_delivery WHERE order_no IN (?) GROUP BY order_no`,
    [orderNos],
  );
  expect(transitions).toHaveLength(ORDERS);
  for (const t of transitions) {
    expect([Number(t.paid), Number(t.duplicates)]).toEqual([1, DELIVERIES_PER_PAYMENT - 1]);
  }
  expect(await count(pool, `SELECT COUNT(*) FROM payment_callback WHERE order_no IN (?)`, [orderNos])).toBe(ORDERS);
  expect(await count(pool, `SELECT COUNT(*) FROM payment_anomaly WHERE order_no IN (?)`, [orderNos])).toBe(0);
});

it('should end a concurrent close and payment of the same order in exactly one of the two allowed states', async () => {
  const orderNos = Array.from({ length: 40 }, () => uniqueId('R'));
  for (const orderNo of orderNos) await make.order({ orderNo, amount: 1234 });

  // Which of the two goes first is set by what the database shows, not by a head start in time:
  // a quarter of the orders are paid once their close has closed the order row, a quarter are
  // closed once their payment has paid it (its other deliveries still on their way), and half
  // start both at once and race for real. Both ends occur however slow the machine is.
  const statusOf = async (orderNo: string) => {
    const [[order]] = await pool.query<Array<RowDataPacket & { status: string }>>(
      `SELECT status FROM payment_order WHERE order_no = ?`,
      [orderNo],
    );
    return order.status;
  };
  /** Starts `first`, and `second` once the order is `status` (or `first` has ended: the checks below judge it). */
  const once = async (
    orderNo: string,
    status: string,
    first: () => Promise<unknown>,
    second: () => Promise<unknown>,
  ) => {
    let ended = false;
    const started = first();
    void started.then(
      () => (ended = true),
      () => (ended = true),
    );
    await eventually(`order ${orderNo} to be ${status}`, async () => ended || (await statusOf(orderNo)) === status);
    await Promise.all([started, second()]);
  };
  const results = await Promise.all(
    orderNos.map(async (orderNo, i) => {
      let closed = 0;
      let paid: PlatformReply[] = [];
      const close = async () => (closed = await closeStatus(replicas[i % 2], orderNo));
      const pay = async () =>
        (paid = await deliverConcurrently(
          { orderNo, transactionId: uniqueId('T'), channel: Math.floor(i / 4) % 2 === 0 ? 'WECHATPAY' : 'ALIPAY' },
          1234,
        ));
      const order = (['closeFirst', 'payFirst', 'together', 'together'] as const)[i % 4];
      if (order === 'closeFirst') await once(orderNo, 'CLOSED', close, pay);
      else if (order === 'payFirst') await once(orderNo, 'PAID', pay, close);
      else await Promise.all([close(), pay()]);
      return { orderNo, order, closeStatus: closed, payAcked: paid.length > 0 && paid.every(acked) };
    }),
  );

  const ended = { PAID: 0, CLOSED: 0 };
  for (const r of results) {
    expect(r.payAcked).toBe(true);
    const status = await statusOf(r.orderNo);
    const anomalies = await count(
      pool,
      `SELECT COUNT(*) FROM payment_anomaly WHERE order_no = ? AND type = 'PAID_AFTER_CLOSE'`,
      [r.orderNo],
    );
    const events = await count(pool, `SELECT COUNT(*) FROM outbox_event WHERE order_no = ?`, [r.orderNo]);
    if (status === 'PAID' || status === 'CLOSED') ended[status]++;
    if (r.order !== 'together')
      expect({ order: r.order, status }).toEqual({
        order: r.order,
        status: r.order === 'closeFirst' ? 'CLOSED' : 'PAID',
      });
    if (status === 'PAID') {
      expect({ closeStatus: r.closeStatus, anomalies, events }).toEqual({ closeStatus: 409, anomalies: 0, events: 1 });
    } else {
      expect({ status, closeStatus: r.closeStatus, anomalies, events }).toEqual({
        status: 'CLOSED',
        closeStatus: 200,
        anomalies: 1,
        events: 0,
      });
    }
  }
  // Both ends happened: some orders were paid first, others closed first, and each ended as allowed.
  expect(ended.PAID).toBeGreaterThan(0);
  expect(ended.CLOSED).toBeGreaterThan(0);
});
