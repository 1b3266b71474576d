import { loadDatabaseConfig } from './database.config';
import { loadServerConfig } from './server.config';

describe('server and database configuration', () => {
  it('should default to port 3000 and the local MariaDB, and name a bad variable', () => {
    expect(loadServerConfig({})).toEqual({
      port: 3000,
      metricsPort: 9464,
      internalApiToken: undefined,
      http: { requestTimeoutMs: 10000, headersTimeoutMs: 5000, keepAliveTimeoutMs: 65000, maxConnections: 2000 },
      healthCheckTimeoutMs: 1000,
      shutdownDrainMs: 5000,
      shutdownGraceMs: 20000,
      exampleHandlers: false,
    });
    expect(loadDatabaseConfig({}).url).toBe('mariadb://root@127.0.0.1:3306/payments');
    expect(() => loadServerConfig({ INTERNAL_API_TOKEN: 'short' })).toThrow(/INTERNAL_API_TOKEN must be at least 16/);
    expect(() => loadDatabaseConfig({ DATABASE_URL: 'postgres://x/y' })).toThrow(/DATABASE_URL/);
    expect(() => loadServerConfig({ PORT: 'eighty' })).toThrow(/PORT/);
  });
});
