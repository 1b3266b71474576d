import { createConnection } from 'mysql2/promise';
import { createServer, Server } from 'node:net';
import { explainDatabaseStartError } from './database-start-error';

const URL_WITH_SECRET = 'mariadb://app:s3cret-Pa55@db.internal:3307/payments';

function driverError(code: string, message: string, errno?: number): Error {
  return Object.assign(new Error(message), { code, errno });
}

describe(explainDatabaseStartError.name, () => {
  const sut = explainDatabaseStartError;

  it('should point at npm run db:create for an unknown database, naming host, port and database', () => {
    const said = sut(driverError('ER_BAD_DB_ERROR', "Unknown database 'payments'", 1049), URL_WITH_SECRET);

    expect(said).toContain('npm run db:create');
    expect(said).toContain('db.internal:3307');
    expect(said).toContain('"payments"');
    expect(said).not.toContain('s3cret-Pa55');
  });

  it.each(['ECONNREFUSED', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH'])(
    'should name host, port and DATABASE_URL, never the password, when the connect fails with %s',
    (code) => {
      const said = sut(driverError(code, `connect ${code} 10.0.0.9:3307`), URL_WITH_SECRET);

      expect(said).toContain('db.internal:3307');
      expect(said).toContain('DATABASE_URL');
      expect(said).toContain(code);
      expect(said).not.toContain('s3cret-Pa55');
    },
  );

  it('should say which credentials to check when the server refuses the user, without the password', () => {
    const said = sut(driverError('ER_ACCESS_DENIED_ERROR', "Access denied for user 'app'@'10.0.0.2'"), URL_WITH_SECRET);

    expect(said).toContain('check the user and password');
    expect(said).not.toContain('s3cret-Pa55');
  });

  it('should use the default port 3306 when DATABASE_URL names none', () => {
    expect(sut(driverError('ECONNREFUSED', 'connect ECONNREFUSED'), 'mysql://root@localhost/x')).toContain(
      'localhost:3306',
    );
  });

  it('should leave any other error to the generic report', () => {
    expect(sut(new Error('boom'), URL_WITH_SECRET)).toBeUndefined();
    expect(sut(undefined, URL_WITH_SECRET)).toBeUndefined();
  });

  describe('with the real driver', () => {
    let silent: Server;
    let port: number;

    beforeAll(async () => {
      // Accepts connections and never answers: the driver's connect timeout is what ends the wait.
      silent = createServer(() => undefined);
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      port = (silent.address() as { port: number }).port;
    });

    afterAll(() => new Promise<void>((resolve) => silent.close(() => resolve())));

    it('should explain a connect time-out of mysql2 naming host and port', async () => {
      const url = `mysql://root:hidden-pw@127.0.0.1:${port}/payments`;
      const error: unknown = await createConnection({ uri: url, connectTimeout: 300 }).then(
        (conn) => conn.end(),
        (e: unknown) => e,
      );

      const said = sut(error, url);

      expect(said).toContain(`127.0.0.1:${port}`);
      expect(said).not.toContain('hidden-pw');
    });
  });
});
