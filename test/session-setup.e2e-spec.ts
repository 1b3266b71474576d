import { DataSource } from 'typeorm';
import { Pool, RowDataPacket } from 'mysql2/promise';
import { createTestPlatforms, notificationsOnly, RunningApp, startApp, testDatabasePool } from './support/test-app';

/**
 * The service sends multi-statement queries with values escaped by mysql2, which escapes quotes
 * with a backslash: its sessions must not run under NO_BACKSLASH_ESCAPES, whatever the server's default.
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
});
