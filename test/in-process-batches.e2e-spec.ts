import { RowDataPacket } from 'mysql2/promise';
import { eventually } from './support/eventually';
import { count, createTestPlatforms, startApp, TestClient, testDatabasePool, uniqueId } from './support/test-app';
import {
  createTestHandlerEffectTable,
  TEST_HANDLER_EFFECT_TABLE,
  WitnessHandler,
  WitnessHandlerModule,
} from './support/test-handlers';

/**
 * The example after-payment handlers are in the app only with EXAMPLE_HANDLERS=true, as createApp
 * composes it. How the relay hands them their events in batches is in
 * test/medium/in-process-batches.medium-spec.ts.
 */
it('should leave the example handlers out unless EXAMPLE_HANDLERS=true', async () => {
  const platforms = await createTestPlatforms();
  const pool = testDatabasePool();
  await createTestHandlerEffectTable(pool);
  // A handler of the test's own beside AppModule: its effects show that the app's handlers were handed the events.
  const running = await startApp({ ...platforms.env, OUTBOX_POLL_INTERVAL_MS: '50' }, [WitnessHandlerModule]);
  try {
    const client = new TestClient(running.url, platforms);
    const orderNos = Array.from({ length: 5 }, () => uniqueId('B'));
    for (const orderNo of orderNos) {
      expect((await client.registerOrder({ orderNo, amount: 700 })).status).toBe(201);
      const payment = client.wechatpayPayment({ outTradeNo: orderNo, transactionId: uniqueId('T'), total: 700 });
      expect((await client.postWechatpay(payment)).status).toBe(204);
    }
    const [events] = await pool.query<RowDataPacket[]>(
      `SELECT event_id FROM outbox_event WHERE order_no IN (?) AND type = 'payment.succeeded'`,
      [orderNos],
    );
    const eventIds = events.map((r) => String(r.event_id));
    expect(eventIds).toHaveLength(5);
    const published = 'SELECT COUNT(*) FROM outbox_event WHERE published_at IS NOT NULL AND event_id IN (?)';
    await eventually('the events to be published', async () => (await count(pool, published, [eventIds])) === 5);
    const witnessed = `SELECT COUNT(DISTINCT event_id) FROM ${TEST_HANDLER_EFFECT_TABLE} WHERE consumer = ? AND event_id IN (?)`;
    await eventually(
      'the handlers to have been handed every event',
      async () => (await count(pool, witnessed, [WitnessHandler.CONSUMER, eventIds])) === 5,
    );

    // A table the examples never created (this run's database may not have them) holds none either.
    const noTable = (e: Error & { code?: string }) => (e.code === 'ER_NO_SUCH_TABLE' ? 0 : Promise.reject(e));
    for (const table of ['points_grant', 'coupon_issue', 'shipment_request']) {
      const sql = `SELECT COUNT(*) FROM ${table} WHERE order_no IN (?)`;
      expect(await count(pool, sql, [orderNos]).catch(noTable)).toBe(0);
    }
    const [consumers] = await pool.query<RowDataPacket[]>(
      'SELECT DISTINCT consumer FROM processed_event WHERE event_id IN (?)',
      [eventIds],
    );
    expect(consumers.map((r) => String(r.consumer))).toEqual([WitnessHandler.CONSUMER]);
    // Nor did one fail on them, to run later.
    expect(await count(pool, 'SELECT COUNT(*) FROM handler_retry WHERE event_id IN (?)', [eventIds])).toBe(0);
  } finally {
    await running.close();
    await pool.end();
  }
});
