import { loadDatabaseConfig } from '../platform/config/database.config';
import { loadEventsConfig } from '../events/events.config';
import { loadServerConfig } from '../platform/config/server.config';
import { validateConfiguration } from './configuration';
import { ConfigurationError } from '../platform/config/env-validation';

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    validateConfiguration(env);
  } catch (error) {
    if (error instanceof ConfigurationError) return error.problems;
    throw error;
  }
  return [];
}

describe(validateConfiguration.name, () => {
  const sut = validateConfiguration;

  it('should accept the empty environment (every default)', () => {
    expect(() => sut({})).not.toThrow();
  });

  it.each([
    ['PORT', 'abc', 'PORT must be an integer from 0 to 65535'],
    ['PORT', '70000', 'PORT must be an integer from 0 to 65535'],
    ['PORT', '80.5', 'PORT must be an integer from 0 to 65535'],
    ['LOG_LEVEL', 'verbose', 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent'],
    ['EXAMPLE_HANDLERS', 'yes', 'EXAMPLE_HANDLERS must be one of true, false'],
    ['MIGRATIONS_RUN', '0', 'MIGRATIONS_RUN must be one of true, false'],
    ['DATABASE_QUERY_TIMEOUT_MS', '50', 'DATABASE_QUERY_TIMEOUT_MS must be an integer from 100 to 600000'],
    [
      'DATABASE_POOL_ACQUIRE_TIMEOUT_MS',
      'soon',
      'DATABASE_POOL_ACQUIRE_TIMEOUT_MS must be an integer from 10 to 60000',
    ],
    ['HTTP_MAX_CONNECTIONS', '0', 'HTTP_MAX_CONNECTIONS must be an integer from 1 to 100000'],
    ['SHUTDOWN_GRACE_MS', '-1', 'SHUTDOWN_GRACE_MS must be an integer from 0 to 120000'],
    ['METRICS_PORT', 'x', 'METRICS_PORT must be an integer from 0 to 65535'],
  ])('should name %s=%s once, with the allowed values', (name, value, problem) => {
    expect(problemsOf({ [name]: value })).toEqual([problem]);
  });

  it('should report every bad variable of every namespace together', () => {
    expect(problemsOf({ PORT: 'abc', LOG_LEVEL: 'verbose', RABBITMQ_URL: 'http://x', ADMIN_TOKENS: 'x' })).toEqual([
      'PORT must be an integer from 0 to 65535',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
      'RABBITMQ_URL must look like amqp://user:password@host:5672',
      expect.stringMatching(/^ADMIN_TOKENS entry 1 must be operatorId:token:role/),
    ]);
  });

  it('should name a channel variable and a refund variable together', () => {
    const problems = problemsOf({ ALIPAY_GATEWAY_URL: 'nope', REFUND_POLL_INTERVAL_MS: '0' });

    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('ALIPAY_GATEWAY_URL'),
        expect.stringContaining('REFUND_POLL_INTERVAL_MS'),
      ]),
    );
  });

  it('should say a mistake of the accounts file once, though every channel reads it', () => {
    const problems = problemsOf({ PAYMENT_ACCOUNTS_FILE: '/nonexistent/accounts.yaml' });

    expect(problems).toEqual([
      expect.stringMatching(/PAYMENT_ACCOUNTS_FILE: cannot read \/nonexistent\/accounts.yaml/),
    ]);
  });

  it('should put every problem on one line', () => {
    const error = (() => {
      try {
        sut({ PORT: 'abc', WECHATPAY_MCHID: '1900009191' });
      } catch (e) {
        return e as Error;
      }
    })();

    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error?.message).not.toContain('\n');
    expect(error?.message).toMatch(/^Invalid configuration: PORT must be .*; WeChat Pay is partly configured/);
  });
});

describe('bounded waits configuration', () => {
  it('should default to the documented timeouts', () => {
    expect(loadDatabaseConfig({})).toMatchObject({
      queryTimeoutMs: 5000,
      connectTimeoutMs: 5000,
      acquireTimeoutMs: 2000,
      queueLimit: 500,
    });
    expect(loadEventsConfig({}).publishTimeoutMs).toBe(5000);
  });

  it('should serve metrics on the management port, 9464 unless METRICS_PORT names another, never on PORT', () => {
    expect(loadServerConfig({}).metricsPort).toBe(9464);
    expect(() => loadServerConfig({ PORT: '8080', METRICS_PORT: '8080' })).toThrow(
      /METRICS_PORT must differ from PORT/,
    );
    expect(() => loadServerConfig({ METRICS_PORT: '3000' })).toThrow(/METRICS_PORT must differ from PORT/);
    expect(loadServerConfig({ PORT: '8080', METRICS_PORT: '9465' }).metricsPort).toBe(9465);
    expect(loadServerConfig({ PORT: '0', METRICS_PORT: '0' }).metricsPort).toBe(0);
  });

  it('should turn the example handlers on only when asked to', () => {
    expect(loadServerConfig({}).exampleHandlers).toBe(false);
    expect(loadServerConfig({ EXAMPLE_HANDLERS: 'false' }).exampleHandlers).toBe(false);
    expect(loadServerConfig({ EXAMPLE_HANDLERS: 'true' }).exampleHandlers).toBe(true);
  });
});
