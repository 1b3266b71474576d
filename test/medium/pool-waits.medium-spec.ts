import { Pool } from 'mysql2/promise';
import { DataSource, QueryRunner } from 'typeorm';
import { AdminModule } from '../../src/admin/admin.module';
import { AdminQueries } from '../../src/admin/admin.queries';
import { NotifyModule } from '../../src/intake/notify.module';
import { OrderModule } from '../../src/order/order.module';
import { SettlementModule } from '../../src/settlement/settlement.module';
import { TradeModule } from '../../src/trade/trade.module';
import { sleep, waitFor } from '../support/eventually';
import { Factories } from '../support/factories';
import { Medium, MediumContext, startMedium } from '../support/medium';
import { deliverPayment, exposition, IntakeReply, isAck } from '../support/medium-intake';
import { metricValue } from '../support/order-effects';
import { paymentEffects, StormPayment, stormPayments } from '../support/payment-storm';
import { notificationsOnly } from '../support/test-app';

/**
 * Waits for a database connection, as the metrics database_pool_waiting and
 * database_pool_acquire_seconds count them: deliveries handed to the notify use case
 * (NotificationIntake) while this suite holds every connection of the notify pool, and the admin
 * reads on the reporting pool.
 */
const POOL_SIZE = 2;
const ACQUIRE_TIMEOUT_MS = 1500;
const HELD_MS = 600;
const notify = { pool: 'notify' };

let setup: Medium;
let ctx: MediumContext;
let make: Factories;
let pool: Pool;

beforeAll(async () => {
  setup = await startMedium(
    (p) => ({
      ...notificationsOnly(p.env),
      DATABASE_POOL_SIZE: String(POOL_SIZE),
      DATABASE_POOL_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_TIMEOUT_MS),
    }),
    { imports: [OrderModule, SettlementModule, TradeModule, NotifyModule, AdminModule], fake: false },
  );
  ({ ctx, make, pool } = setup);
});

afterAll(() => setup?.close());

const scrape = exposition;
const deliver = (p: StormPayment) => deliverPayment(ctx, make.deliveries, p);

async function registerAll(payments: StormPayment[]): Promise<void> {
  for (const p of payments) await make.order({ orderNo: p.orderNo, amount: p.amount });
}

/** Every connection of the notify pool, taken through the module's own DataSource as deliveries take them. */
async function holdWholePool(): Promise<QueryRunner[]> {
  const runners = Array.from({ length: POOL_SIZE }, () => ctx.get(DataSource).createQueryRunner());
  for (const runner of runners) await runner.connect();
  return runners;
}

/** Observations of the notify pool's acquire histogram longer than `seconds` (a bucket bound). */
const waitsLongerThan = (text: string, seconds: string) =>
  metricValue(text, 'database_pool_acquire_seconds_count', notify) -
  metricValue(text, 'database_pool_acquire_seconds_bucket', { ...notify, le: seconds });

describe('waits for a database connection, as metrics (database_pool_waiting, database_pool_acquire_seconds)', () => {
  // The module's own workers (the outbox relay, the retention and trade-query sweeps) take the same
  // pool, so a count can include their waits besides the delivery's.
  it('should show a first delivery waiting while the pool is taken, and its wait once it got a connection', async () => {
    const payments = stormPayments(1, 'PW');
    await registerAll(payments);
    const before = await scrape();
    const held = await holdWholePool();

    const answer = deliver(payments[0]);
    let answered = false;
    void answer.then(() => (answered = true));
    await waitFor('the delivery to wait for a connection', async () => {
      return metricValue(await scrape(), 'database_pool_waiting', notify) >= 1;
    });
    await sleep(HELD_MS);
    expect(answered).toBe(false);
    await held[0].release();

    expect(isAck(payments[0], await answer)).toBe(true);
    await held[1].release();
    await waitFor('nobody waiting', async () => metricValue(await scrape(), 'database_pool_waiting', notify) === 0);
    expect(waitsLongerThan(await scrape(), '0.5') - waitsLongerThan(before, '0.5')).toBeGreaterThanOrEqual(1);
    expect(await paymentEffects(pool, payments)).toMatchObject({ paidOrders: 1, ordersNotExactlyOnce: [] });
  });

  it('should count a caller that gave up at the acquire timeout, and wait for nobody afterwards', async () => {
    const payments = stormPayments(1, 'PT');
    await registerAll(payments);
    const before = await scrape();
    const held = await holdWholePool();
    let answer: IntakeReply;
    try {
      answer = await deliver(payments[0]);
    } finally {
      for (const runner of held) await runner.release();
    }

    expect(answer.status).toBe(503);
    // Nobody is left counted as waiting: the caller that gave up is off the gauge.
    await waitFor('nobody waiting', async () => metricValue(await scrape(), 'database_pool_waiting', notify) === 0);
    const after = await scrape();
    // It waited the whole acquire timeout (1.5 s): between the 1 s and 2.5 s buckets.
    expect(waitsLongerThan(after, '1') - waitsLongerThan(before, '1')).toBeGreaterThanOrEqual(1);
    expect(waitsLongerThan(after, '2.5') - waitsLongerThan(before, '2.5')).toBe(0);
    expect(await paymentEffects(pool, payments)).toMatchObject({ paidOrders: 0 });

    // The platform's retry, with the pool free again, pays it once.
    expect(isAck(payments[0], await deliver(payments[0]))).toBe(true);
    expect(await paymentEffects(pool, payments)).toMatchObject({ paidOrders: 1, ordersNotExactlyOnce: [] });
  });

  it("should report the admin queries' reads under the reporting pool, apart from the notify pool", async () => {
    const before = await scrape();
    await ctx.inContext(() => ctx.get(AdminQueries).anomalies({}));
    const after = await scrape();
    const reporting = { pool: 'reporting' };
    expect(
      metricValue(after, 'database_pool_acquire_seconds_count', reporting) -
        metricValue(before, 'database_pool_acquire_seconds_count', reporting),
    ).toBeGreaterThanOrEqual(1);
    expect(metricValue(after, 'database_pool_waiting', reporting)).toBe(0);
  });
});
