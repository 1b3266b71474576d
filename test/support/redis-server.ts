import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freeFixedPort } from './payment-storm';

/**
 * A private redis-server child process on a free port, never the machine's shared one: a suite can
 * SIGKILL it and start it again on the same port, stall it (SIGSTOP/SIGCONT) or flush it. Nothing
 * is persisted.
 */
export class RedisServer {
  private child?: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'pcs-redis-'));

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freeFixedPort());
    await server.start();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        output += chunk;
        if (output.includes('Ready to accept connections')) resolve();
      });
      child.once('exit', (code, signal) => reject(new Error(`redis-server exited (${signal ?? code}):\n${output}`)));
    });
  }

  /** Dies at once, as in a crash: every connection is cut, new ones are refused. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** Connections stay open and are accepted, but nothing is answered until resume(). */
  pause(): void {
    this.child!.kill('SIGSTOP');
  }

  resume(): void {
    this.child!.kill('SIGCONT');
  }

  /** Runs one command on a connection of its own. */
  async command(name: string, ...args: Array<string | number>): Promise<unknown> {
    const client = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await client.connect();
      return await client.call(name, ...args);
    } finally {
      client.disconnect();
    }
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
