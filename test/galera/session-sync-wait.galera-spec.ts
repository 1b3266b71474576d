import { createConnection } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { OrderModule } from '../../src/order/order.module';
import { ReportingDatabase } from '../../src/platform/database/reporting-database';
import { nodeDatabaseUrl } from '../support/galera-cluster';
import { Medium, MediumContext, startMedium } from '../support/medium';

/**
 * A cluster whose other applications keep wsrep_sync_wait's global default of 0: the service starts
 * on such a node and sets the variable for its own sessions, on every pooled connection of both pools.
 */
describe('a Galera node whose global wsrep_sync_wait is 0', () => {
  const NODE = 3;
  let medium: Medium | undefined;
  let context: MediumContext | undefined;

  const setGlobalSyncWait = async (value: number) => {
    const admin = await createConnection({ uri: nodeDatabaseUrl(NODE) });
    try {
      await admin.query('SET GLOBAL wsrep_sync_wait = ?', [value]);
    } finally {
      await admin.end();
    }
  };

  beforeAll(() => setGlobalSyncWait(0));

  afterAll(async () => {
    await medium?.close();
    await setGlobalSyncWait(1);
  });

  it("should start on it, every session of both pools waiting for the cluster's commits", async () => {
    medium = await startMedium(() => ({ DATABASE_URL: nodeDatabaseUrl(NODE), DATABASE_POOL_SIZE: '4' }), {
      imports: [OrderModule],
      fake: false,
    });
    context = medium.ctx;
    // Four at once take four connections of the pool: each one set up as it was opened.
    const sessions = await Promise.all(
      [1, 2, 3, 4].map(() =>
        context!
          .get(DataSource)
          .query<Array<{ id: string; global: string; session: string }>>(
            'SELECT CONNECTION_ID() AS id, @@GLOBAL.wsrep_sync_wait AS global, @@SESSION.wsrep_sync_wait AS session, SLEEP(0.3) AS s',
          ),
      ),
    );
    const rows = sessions.map(([row]) => row);
    expect(new Set(rows.map((row) => String(row.id))).size).toBe(4);
    expect(rows.map((row) => [Number(row.global), Number(row.session)])).toEqual(Array(4).fill([0, 1]));

    const reporting = await context.get(ReportingDatabase).dataSource();
    const [read] = await reporting.query<Array<{ session: string }>>('SELECT @@SESSION.wsrep_sync_wait AS session');
    expect(Number(read.session)).toBe(1);
  });
});
