import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'mysql2/promise';
import { AppProcess, startAppProcess } from './support/app-process';
import { eventually } from './support/eventually';
import {
  databaseProxy,
  databaseUrlVia,
  deliver,
  inParallel,
  isAck,
  paymentEffects,
  registerAll,
  stormPayments,
} from './support/payment-storm';
import { TcpProxy } from './support/tcp-proxy';
import { count, createTestPlatforms, notificationsOnly, TestClient, testDatabasePool } from './support/test-app';

const PAYMENTS = 400;

describe('an instance SIGKILLed in the middle of replaying its spool', () => {
  let pool: Pool;
  let proxy: TcpProxy;
  let child: AppProcess | undefined;

  beforeAll(async () => {
    pool = testDatabasePool();
    proxy = await databaseProxy();
  });
  afterAll(async () => {
    child?.child.kill('SIGKILL');
    await child?.exited;
    await proxy?.stop();
    await pool?.end();
  });

  it(`should still apply each of ${PAYMENTS} spooled payments exactly once after a restart`, async () => {
    const platforms = await createTestPlatforms();
    const env = {
      ...notificationsOnly(platforms.env),
      DATABASE_URL: databaseUrlVia(proxy),
      SPOOL_DIR: mkdtempSync(join(tmpdir(), 'pcs-spool-')),
    };
    child = await startAppProcess(env);
    const client = new TestClient(child.url, platforms);
    const payments = stormPayments(PAYMENTS, 'K');
    await registerAll(client, payments);
    const orderNos = payments.map((p) => p.orderNo);

    await proxy.stop();
    const deliveries = payments.flatMap((p, i) => (i % 4 === 0 ? [p, p] : [p]));
    await inParallel(deliveries, 16, async (p) => expect(isAck(p, await deliver(client, p))).toBe(true));

    await proxy.start();
    const paid = () =>
      count(pool, `SELECT COUNT(*) FROM payment_order WHERE order_no IN (?) AND status = 'PAID'`, [orderNos]);
    await eventually('the replay to begin', async () => (await paid()) > 0, 60_000);
    child.child.kill('SIGKILL');
    expect(await child.exited).toBe('SIGKILL');
    const paidAtKill = await paid();
    expect(paidAtKill).toBeLessThan(PAYMENTS);

    child = await startAppProcess(env);
    await eventually('every payment to apply', async () => (await paid()) === PAYMENTS, 120_000);
    await eventually('the restarted spool to drain', async () => {
      const body = (await (await fetch(`${child!.managementUrl}/health/ready`)).json()) as {
        details: { spool: { pending: number } };
      };
      return body.details.spool.pending === 0;
    });

    const effects = await paymentEffects(pool, payments);
    expect(effects).toMatchObject({
      paidOrders: PAYMENTS,
      ordersNotExactlyOnce: [],
      paidTransitions: PAYMENTS,
      outboxEvents: PAYMENTS,
      callbacks: PAYMENTS,
      anomalies: 0,
    });
    // Every acked delivery is on record. The one being replayed at the kill is replayed again from
    // the checkpoint, as a DUPLICATE: recorded twice if it was recorded before the kill, or only
    // as a DUPLICATE if the kill fell between its commit and its record.
    expect(effects.deliveries).toBeGreaterThanOrEqual(deliveries.length);
    expect(effects.deliveries).toBeLessThanOrEqual(deliveries.length + 1);
    expect(effects.paidDeliveries).toBeGreaterThanOrEqual(PAYMENTS - 1);
    expect(effects.paidDeliveries).toBeLessThanOrEqual(PAYMENTS);
  });
});
