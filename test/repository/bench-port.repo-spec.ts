import { execFile } from 'node:child_process';
import { createServer, Server } from 'node:net';
import { join } from 'node:path';
import { withAdminConnection } from '../support/test-database';

/** `npm run bench` must never measure a process that already holds its port. */

const ROOT = join(__dirname, '../..');

function bench(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', join(ROOT, 'bench/bench.ts'), ...args],
      { cwd: ROOT, timeout: 120_000 },
      (error, _stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stderr }),
    );
  });
}

async function benchDatabases(): Promise<string[]> {
  return withAdminConnection(async (conn) => {
    const [rows] = await conn.query("SHOW DATABASES LIKE 'pcs\\_bench\\_%'");
    return (rows as Array<Record<string, string>>).map((r) => Object.values(r)[0]);
  });
}

/** Listens on a port whose predecessor is free, so that `--replicas 2` from that predecessor reaches it. */
async function occupyPortAfterAFreeOne(): Promise<{ server: Server; port: number }> {
  for (let attempt = 0; ; attempt++) {
    const server = await listen(0);
    const port = (server.address() as { port: number }).port;
    const below = await listen(port - 1).catch(() => undefined);
    if (below) {
      await close(below);
      return { server, port };
    }
    await close(server);
    if (attempt >= 20) throw new Error('found no free port right below an ephemeral one');
  }
}

function listen(port: number): Promise<Server> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '0.0.0.0', () => resolve(server));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('npm run bench --port', () => {
  let occupied: Server;
  let port: number;

  beforeAll(async () => {
    occupied = createServer();
    await new Promise<void>((resolve) => occupied.listen(0, '127.0.0.1', resolve));
    port = (occupied.address() as { port: number }).port;
  });
  afterAll(async () => new Promise<void>((resolve) => occupied.close(() => resolve())));

  it('should refuse a port already in use before creating anything, and say how to choose another', async () => {
    const before = await benchDatabases();

    const { code, stderr } = await bench(['--port', String(port), '--orders', '10']);

    expect(code).toBe(2);
    expect(stderr).toContain(`port ${port} is already in use`);
    expect(stderr).toContain('--port <n>');
    expect(await benchDatabases()).toEqual(before);
  });

  it("should refuse --replicas when a later replica's port is in use, before creating anything", async () => {
    const second = await occupyPortAfterAFreeOne();
    const before = await benchDatabases();

    try {
      const { code, stderr } = await bench(['--port', String(second.port - 1), '--replicas', '2', '--orders', '10']);

      expect(code).toBe(2);
      expect(stderr).toContain(`port ${second.port} is already in use`);
      expect(await benchDatabases()).toEqual(before);
    } finally {
      await close(second.server);
    }
  });

  it('should refuse a number of replicas that is not one', async () => {
    const { code, stderr } = await bench(['--replicas', '0']);

    expect(code).toBe(2);
    expect(stderr).toContain('--replicas must be an integer from 1 to 32');
  });

  it('should refuse a port that is not one', async () => {
    const { code, stderr } = await bench(['--port', '3901x']);

    expect(code).toBe(2);
    expect(stderr).toContain('--port must be an integer from 1 to 65535');
  });
});

describe('npm run bench --duplicates-only, --first-deliveries-only', () => {
  it('should refuse both at once, before creating anything', async () => {
    const before = await benchDatabases();

    const { code, stderr } = await bench(['--duplicates-only', '--first-deliveries-only', '--orders', '10']);

    expect(code).toBe(2);
    expect(stderr).toContain('--duplicates-only and --first-deliveries-only measure different deliveries');
    expect(await benchDatabases()).toEqual(before);
  });
});
