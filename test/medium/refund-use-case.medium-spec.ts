import { Pool } from 'mysql2/promise';
import { TransactionAlreadyActiveError, TransactionNotActiveError } from '@nestjs-cls/transactional';
import { Channel } from '../../src/domain/notification';
import { TransactionRunner } from '../../src/platform/transaction/transaction.runner';
import { EmergencyRefundService } from '../../src/refund/emergency-refund.service';
import { Refund } from '../../src/refund/refund.entity';
import { Refunds } from '../../src/refund/refunds';
import { FakePlatform } from '../../tools/simulator/fake-platform';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { OrderEffects } from '../support/order-effects';
import { RefundEffects } from '../support/refund-effects';
import { count as countRows, uniqueId } from '../support/test-app';

/**
 * The refund use case called as a script or a job would call it, outside any HTTP request: it
 * opens its one transaction, so what it writes commits together or not at all, and the channel
 * is called only for what committed.
 */
let setup: Medium;
let fake: FakePlatform;
let ctx: MediumContext;
let make: Factories;
let pool: Pool;
let orders: OrderEffects;
let refunds: RefundEffects;
let sut: Refunds;

beforeAll(async () => {
  setup = await startMedium({ REFUND_POLL_INTERVAL_MS: '100' });
  ({ fake, ctx, make, pool } = setup);
  orders = new OrderEffects(pool);
  refunds = new RefundEffects(pool);
  sut = ctx.get(Refunds);
});

afterAll(() => setup?.close());

const refundRows = (orderNo: string) => countRows(pool, 'SELECT COUNT(*) FROM refund WHERE order_no = ?', [orderNo]);

describe(Refunds.name, () => {
  it('should record a refund, commit it, and only then call the channel, without any HTTP request', async () => {
    const { orderNo, paidBy, amount } = await make.paidOrder(Channel.Wechatpay, 2500);

    const { refund, created } = await sut.request({ orderNo, transactionId: paidBy, reason: 'a script' }, 'cron');

    expect({ created, status: refund.status, amount: refund.amount, requestedBy: refund.requestedBy }).toEqual({
      created: true,
      status: 'PENDING',
      amount,
      requestedBy: 'cron',
    });
    await refunds.statusIs(refund.refundNo, 'SUCCEEDED');
    expect(fake.callsFor(refund.refundNo)).toBe(1);
    expect(await orders.status(orderNo)).toBe('REFUNDED');
  });

  it('should leave no refund, no reservation and the order PAID when a write after the insert fails', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Alipay, 3100);
    const refundNo = uniqueId('A');
    let written: { refund: Refund; created: boolean } | undefined;

    const failure = sut.request({ orderNo, transactionId: paidBy, reason: 'atomic', refundNo }, 'alice', (answer) => {
      written = answer;
      throw new Error('the audit row could not be written');
    });

    await expect(failure).rejects.toThrow('the audit row could not be written');
    // The refund had been inserted, its amount reserved and the order moved, in the transaction that rolled back.
    expect(written).toMatchObject({ created: true, refund: { refundNo, status: 'PENDING', amount: 3100 } });
    expect(await refundRows(orderNo)).toBe(0);
    expect(await refunds.reserved(paidBy)).toBe(0);
    expect(await orders.status(orderNo)).toBe('PAID');
    expect(await orders.history(orderNo)).toEqual(['->WAIT_PAY', 'WAIT_PAY>PAID']);
    expect(fake.callsFor(refundNo)).toBe(0);

    const again = await sut.request({ orderNo, transactionId: paidBy, reason: 'atomic', refundNo }, 'alice');
    expect(again.created).toBe(true);
    await refunds.statusIs(refundNo, 'SUCCEEDED');
    expect(fake.callsFor(refundNo)).toBe(1);
  });

  it("should refuse to run inside a caller's transaction, whose commit it cannot wait for, and write nothing", async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, 1800);

    const nested = ctx
      .get(TransactionRunner)
      .run(() => sut.request({ orderNo, transactionId: paidBy, reason: 'nested' }, 'alice'));

    await expect(nested).rejects.toBeInstanceOf(TransactionAlreadyActiveError);
    expect(await refundRows(orderNo)).toBe(0);
    expect(await refunds.reserved(paidBy)).toBe(0);
  });

  it('should refuse, as a conflict and writing nothing, a payment that neither paid its order nor is an anomaly', async () => {
    const { orderNo } = await make.paidOrder(Channel.Wechatpay, 1900);
    // A claim with no anomaly beside it, which no settlement writes: a repair by hand, say.
    const stray = uniqueId('T');
    await pool.query(
      `INSERT INTO payment_callback (channel, transaction_id, order_no, amount, currency, first_received_at)
       VALUES ('WECHATPAY', ?, ?, 1900, 'CNY', NOW(3))`,
      [stray, orderNo],
    );

    const refused = await sut
      .request({ orderNo, transactionId: stray, reason: 'stray' }, 'alice')
      .catch((e: unknown) => e);

    expect(refused).toMatchObject({ code: 'RefundConflict', status: 409 });
    expect(await refundRows(orderNo)).toBe(0);
    expect(await refunds.reserved(stray)).toBe(0);
  });
});

describe(EmergencyRefundService.name, () => {
  it('should refuse to record a refund outside a transaction instead of autocommitting each statement', async () => {
    const { orderNo, paidBy } = await make.paidOrder(Channel.Wechatpay, 1700);

    // The decorator throws before the method runs, so not even the first statement is sent.
    const bare = async () =>
      ctx.get(EmergencyRefundService).record({ orderNo, transactionId: paidBy, reason: 'bare' }, 'alice');

    await expect(bare).rejects.toBeInstanceOf(TransactionNotActiveError);
    expect(await refundRows(orderNo)).toBe(0);
    expect(await refunds.reserved(paidBy)).toBe(0);
    expect(await orders.status(orderNo)).toBe('PAID');
  });
});
