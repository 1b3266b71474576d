import { DataSource } from 'typeorm';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { ReportingDatabase } from '../src/platform/database/reporting-database';
import { createTestPlatforms, notificationsOnly, RunningApp, startApp, testDatabasePool } from './support/test-app';

/**
 * The service sends multi-statement queries with values escaped by mysql2, which escapes quotes
 * with a backslash: its sessions must not run under NO_BACKSLASH_ESCAPES, whatever the server's default.
 * On MariaDB they set wsrep_sync_wait for themselves, so that a Galera node needs no global setting.
 */
describe('database sessions', () => {
  let pool: Pool;
  let running: RunningApp | undefined;
  let globalMode: string;

  beforeAll(async () => {
    pool = testDatabasePool();
    const [[row]] = await pool.query<RowDataPacket[]>('SELECT @@GLOBAL.sql_mode AS mode');
    globalMode = String(row.mode);
  });
  afterAll(async () => {
    await pool.query('SET GLOBAL sql_mode = ?', [globalMode]);
    await running?.close();
    await pool.end();
  });

  it('should run READ COMMITTED without NO_BACKSLASH_ESCAPES on a server whose default has it', async () => {
    await pool.query("SET GLOBAL sql_mode = CONCAT(@@GLOBAL.sql_mode, ',NO_BACKSLASH_ESCAPES')");
    try {
      running = await startApp(notificationsOnly((await createTestPlatforms()).env));
      const dataSource = running.app.get(DataSource);
      // Several at once, so that the pool opens new connections while the server's default has the mode.
      const sessions = await Promise.all(
        Array.from({ length: 4 }, () =>
          dataSource.transaction((tx) =>
            tx.query('SELECT @@SESSION.sql_mode AS mode, @@SESSION.tx_isolation AS isolation, SLEEP(0.05) AS s'),
          ),
        ),
      );

      for (const [session] of sessions as Array<Array<{ mode: string; isolation: string }>>) {
        expect(session.mode.split(',')).not.toContain('NO_BACKSLASH_ESCAPES');
        expect(session.isolation).toBe('READ-COMMITTED');
      }
    } finally {
      await pool.query('SET GLOBAL sql_mode = ?', [globalMode]);
    }
  });

  it("should set wsrep_sync_wait's read bit in every session of both pools, the server's global left as it is", async () => {
    running ??= await startApp(notificationsOnly((await createTestPlatforms()).env));
    const dataSource = running.app.get(DataSource);
    const sessions = await Promise.all(
      Array.from({ length: 4 }, () =>
        dataSource.query<Array<{ global: string; session: string }>>(
          'SELECT @@GLOBAL.wsrep_sync_wait AS global, @@SESSION.wsrep_sync_wait AS session, SLEEP(0.05) AS s',
        ),
      ),
    );
    const reporting = await running.app.get(ReportingDatabase).dataSource();
    const [read] = await reporting.query<Array<{ session: string }>>('SELECT @@SESSION.wsrep_sync_wait AS session');

    // The development server is no Galera node: its global is Galera's default, 0.
    expect(sessions.map(([session]) => [Number(session.global), Number(session.session) & 1])).toEqual(
      Array(4).fill([0, 1]),
    );
    expect(Number(read.session) & 1).toBe(1);
  });
});
