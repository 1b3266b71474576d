import { Agent, request } from 'node:http';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { AddressInfo, connect, createServer, Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'mysql2/promise';
import { TEST_RABBITMQ_URL, testExchange } from './support/amqp-tap';
import { LogLine, MainProcess, spawnMain, startLineOf } from './support/app-process';
import { HealthReport } from './support/health-report';
import { eventually } from './support/eventually';
import { count, createTestPlatforms, TestClient, testDatabasePool, TestPlatforms, uniqueId } from './support/test-app';

/** The one line a failed start writes, parsed; fails when there is not exactly one line. */
async function failedStart(main: MainProcess): Promise<{ code: number | null; line: LogLine }> {
  const { code } = await main.exited;
  const lines = main.output().trim().split('\n');
  expect(lines).toHaveLength(1);
  return { code, line: JSON.parse(lines[0]) as LogLine };
}

function messages(main: MainProcess, context: string): string[] {
  return main
    .logLines()
    .filter((l) => l.context === context)
    .map((l) => String(l.msg));
}

describe('starting and stopping the service (src/main.ts in a child process)', () => {
  let platforms: TestPlatforms;
  let pool: Pool;

  beforeAll(async () => {
    platforms = await createTestPlatforms();
    pool = testDatabasePool();
  });
  afterAll(async () => {
    await pool?.end();
  });

  describe('a configuration error', () => {
    it.each([
      ['PORT', 'abc', 'PORT must be an integer from 0 to 65535'],
      ['LOG_LEVEL', 'verbose', 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent'],
      ['EXAMPLE_HANDLERS', 'on', 'EXAMPLE_HANDLERS must be one of true, false'],
    ])(
      '%s=%s should be one JSON line naming the variable and its allowed values, and exit code 1',
      async (name, value, problem) => {
        const { code, line } = await failedStart(spawnMain({ [name]: value }));

        expect(code).toBe(1);
        expect(line).toMatchObject({ level: 60, msg: `Invalid configuration: ${problem}`, problems: [problem] });
      },
    );

    it.each(['PORT', 'METRICS_PORT'])(
      'should name %s when its port is taken by another process, in one line, with exit code 1',
      async (setting) => {
        const taken: Server = createServer();
        await new Promise<void>((resolve) => taken.listen(0, '0.0.0.0', resolve));
        const port = String((taken.address() as AddressInfo).port);
        try {
          const env = { DATABASE_URL: process.env.DATABASE_URL!, PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'silent' };

          const { code, line } = await failedStart(spawnMain({ ...env, [setting]: port }));

          expect(code).toBe(1);
          expect(line.level).toBe(60);
          expect(line.msg).toContain(`EADDRINUSE`);
          expect(line.msg).toContain(
            `the port ${setting} names is taken by another process; stop it, or set ${setting} to a free port`,
          );
        } finally {
          await new Promise((resolve) => taken.close(resolve));
        }
      },
    );

    it('should name a key file that cannot be read, in one line, with exit code 1', async () => {
      const env = {
        ...platforms.env,
        DATABASE_URL: process.env.DATABASE_URL!,
        WECHATPAY_PUBLIC_KEY_PATH: '/nonexistent/wechatpay-pub.pem',
      };

      const { code, line } = await failedStart(spawnMain(env));

      expect(code).toBe(1);
      expect(line.level).toBe(60);
      expect(line.msg).toMatch(/^WECHATPAY_PUBLIC_KEY_PATH: cannot read \/nonexistent\/wechatpay-pub.pem/);
    });

    it('should say once that each API without its token is disabled', async () => {
      const main = spawnMain({ DATABASE_URL: process.env.DATABASE_URL!, PORT: '0', LOG_LEVEL: 'info' });
      try {
        await startLineOf(main);
        const disabled = main
          .logLines()
          .map((line) => String(line.msg))
          .filter((msg) => msg.includes('API is disabled'));

        expect(disabled.sort()).toEqual([
          'the admin API is disabled: set ADMIN_TOKENS to enable it',
          'the order API is disabled: set INTERNAL_API_TOKEN to enable it',
        ]);
      } finally {
        main.child.kill('SIGKILL');
        await main.exited;
      }
    });

    it('should read .env from the working directory, the environment winning over it', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'pcs-dotenv-'));
      writeFileSync(join(dir, '.env'), 'PORT=abc\nSHUTDOWN_GRACE_MS=-5\n');

      const { code, line } = await failedStart(spawnMain({ PORT: '0' }, dir));

      expect(code).toBe(1);
      // PORT=abc of the file lost to PORT=0 of the environment; the file's other mistake was read.
      expect(line.problems).toEqual(['SHUTDOWN_GRACE_MS must be an integer from 0 to 120000']);
    });
  });

  describe('a start, then SIGTERM with a keep-alive client and a slow-body client connected', () => {
    // Long enough that the requests below fit in the drain on a loaded machine: the test checks they did.
    const DRAIN_MS = 10_000;
    const GRACE_MS = 3000;
    let main: MainProcess;
    let started: LogLine;
    let exchange: string;

    beforeAll(async () => {
      exchange = testExchange();
      main = spawnMain({
        ...platforms.env,
        DATABASE_URL: process.env.DATABASE_URL!,
        RABBITMQ_URL: TEST_RABBITMQ_URL,
        RABBITMQ_EXCHANGE: exchange,
        PORT: '0',
        METRICS_PORT: '0',
        LOG_LEVEL: 'info',
        SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
        SHUTDOWN_GRACE_MS: String(GRACE_MS),
        // Long enough that only the shutdown grace can end the slow-body request.
        HTTP_REQUEST_TIMEOUT_MS: '60000',
      });
      started = await startLineOf(main);
    });
    afterAll(async () => {
      if (main.child.exitCode === null) main.child.kill('SIGKILL');
      await main.exited;
    });

    it('should say the port, the channels with their accounts, key ids and refunds, and where events go, without credentials', () => {
      expect(started.port).toEqual(expect.any(Number));
      expect(started.metricsPort).not.toBe(started.port);
      expect(started.channels).toEqual({
        wechatpay: {
          accounts: [platforms.wechatpay.mchid],
          keyIds: [platforms.wechatpay.publicKeySigner.serial, platforms.wechatpay.certSigner.serial],
          refunds: [platforms.wechatpay.mchid],
        },
        alipay: { accounts: [platforms.alipay.appId], keyIds: [], refunds: [platforms.alipay.appId] },
        unionpay: 'disabled',
      });
      const broker = new URL(TEST_RABBITMQ_URL);
      expect(started.events).toBe(`RabbitMQ amqp://${broker.host}, exchange ${exchange}`);
      expect(started.exampleHandlers).toBe(false);
      expect(started.msg).toContain(`started on port ${String(started.port)}`);
      expect(started.msg).toContain(
        `/metrics and the readiness report on management port ${String(started.metricsPort)}`,
      );
      expect(main.output()).not.toContain(`:${broker.password}@`);
    });

    it("should report its version, package.json's, on the start line and on liveness", async () => {
      const version = (JSON.parse(readFileSync(join(__dirname, '../package.json'), 'utf8')) as { version: string })
        .version;
      expect(started.version).toBe(version);
      expect(started.msg).toContain(`(version ${version})`);
      const live = await fetch(`http://127.0.0.1:${String(started.metricsPort)}/health/live`);
      expect(await live.json()).toMatchObject({ status: 'ok', info: { service: { status: 'up', version } } });
    });

    it('should serve /metrics on METRICS_PORT only', async () => {
      const metrics = await fetch(`http://127.0.0.1:${String(started.metricsPort)}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('payment_notifications_total');
      expect((await fetch(`http://127.0.0.1:${String(started.port)}/metrics`)).status).toBe(404);
    });

    it('should fail readiness at once, serve during the drain, close the listener and idle connections, cut the slow client after the grace, and exit 0', async () => {
      const base = `http://127.0.0.1:${String(started.port)}`;
      const client = new TestClient(base, platforms);
      const orderNo = uniqueId('S');
      expect((await client.registerOrder({ orderNo, amount: 1234 })).status).toBe(201);
      expect((await fetch(`${base}/health/ready`)).status).toBe(200);

      const keepAlive = await idleKeepAliveSocket(started.port as number);
      const slow = slowBodyClient(started.port as number);
      const killedAt = Date.now();
      main.child.kill('SIGTERM');

      // A safety net: readiness is asked on the public port, which closes when the drain ends.
      await eventually('readiness to fail', async () => (await fetch(`${base}/health/ready`)).status === 503, DRAIN_MS);
      const management = `http://127.0.0.1:${String(started.metricsPort)}`;
      const ready = (await (await fetch(`${management}/health/ready`)).json()) as HealthReport;
      expect(ready.details.shutdown).toEqual({ status: 'down', message: 'this instance is stopping' });
      expect(ready.details.database.status).toBe('up');

      // Still served while load balancers notice: a payment delivered during the drain is paid and acked.
      const paid = await client.postAlipay(
        client.alipayPayment({ outTradeNo: orderNo, tradeNo: uniqueId('2026'), totalAmount: '12.34' }),
      );
      expect(Date.now() - killedAt).toBeLessThan(DRAIN_MS);
      expect([paid.status, paid.body]).toEqual([200, 'success']);
      expect(
        await count(pool, `SELECT COUNT(*) FROM payment_order WHERE order_no = ? AND status = 'PAID'`, [orderNo]),
      ).toBe(1);

      await eventually(
        'the listener to close',
        async () => !(await accepts(started.port as number)),
        DRAIN_MS + 30_000,
      );
      await eventually('the idle keep-alive connection to be closed', () => keepAlive.closed, 30_000);
      const { code, signal } = await main.exited;
      expect({ code, signal }).toEqual({ code: 0, signal: null });
      expect(slow.closed).toBe(true);
      expect(slow.bytesSent).toBeLessThan(slow.bodyLength);

      const steps = messages(main, 'Shutdown');
      expect(steps).toEqual([
        expect.stringMatching(
          new RegExp(`^SIGTERM: readiness answers 503 from now; serving requests for ${DRAIN_MS} ms more`),
        ),
        expect.stringMatching(
          /^listener closed after serving \d+ requests while draining; idle connections closed; 1 requests in flight get up to 3000 ms$/,
        ),
        expect.stringMatching(/^grace of 3000 ms over: cut 1 connections \(1 requests unfinished\)$/),
        expect.stringMatching(/^background workers stopped: \w+(, \w+)*$/),
        expect.stringMatching(
          /^stopped in \d+ ms: \d+ requests served after SIGTERM, 1 cut short; workers, broker connection and database pool closed$/,
        ),
      ]);
      const stopped = steps[3].replace('background workers stopped: ', '').split(', ').sort();
      expect(stopped).toEqual([
        'ChannelKeyFiles',
        'MerchantDirectory',
        'OrderExpiryWorker',
        'OutboxRelay',
        'PaymentQueryWorker',
        'ReconciliationScheduler',
        'RefundRetryWorker',
        'RetentionWorker',
        'WebhookFanOut',
      ]);
      for (const worker of stopped) expect(messages(main, worker)).toContain('stopped after its current round');
      // Nothing the slow client sent was taken as a delivery.
      expect(await count(pool, 'SELECT COUNT(*) FROM callback_delivery WHERE order_no = ?', [orderNo])).toBe(1);
    });
  });
});

/** A keep-alive connection that served one request and now sits idle; `closed` turns true when the server closes it. */
async function idleKeepAliveSocket(port: number): Promise<{ closed: boolean }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const state = { closed: false };
  await new Promise<void>((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', path: '/health/live', agent }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('socket', (socket: Socket) => socket.once('close', () => (state.closed = true)));
    req.on('error', reject);
    req.end();
  });
  return state;
}

/** Posts a notification body at one byte every 500 ms: it would take minutes to arrive. */
function slowBodyClient(port: number): { closed: boolean; bytesSent: number; bodyLength: number } {
  const bodyLength = 400;
  const state = { closed: false, bytesSent: 0, bodyLength };
  const socket = connect(port, '127.0.0.1', () => {
    socket.write(
      `POST /notify/alipay HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded; charset=utf-8\r\nContent-Length: ${bodyLength}\r\n\r\n`,
    );
    const timer = setInterval(() => {
      if (socket.destroyed) return clearInterval(timer);
      socket.write('a');
      state.bytesSent++;
    }, 500);
    socket.once('close', () => clearInterval(timer));
  });
  socket.on('error', () => undefined);
  socket.once('close', () => (state.closed = true));
  return state;
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
