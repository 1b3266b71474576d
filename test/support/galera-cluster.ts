import { execFile } from 'node:child_process';
import { createPool, Pool } from 'mysql2/promise';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TcpProxy } from './tcp-proxy';
import { freeFixedPort } from './payment-storm';

const run = promisify(execFile);
const SCRIPT = join(__dirname, '../../tools/galera/cluster.sh');

/** The cluster tools/galera/cluster.sh runs: node N answers SQL on 127.0.0.1:3306N. */
export const GALERA_NODES = [1, 2, 3] as const;
export type GaleraNode = (typeof GALERA_NODES)[number];

export function nodePort(node: GaleraNode): number {
  return 33060 + node;
}

/** The run's DATABASE_URL on node N itself (the database was created through node 1 and replicated). */
export function nodeDatabaseUrl(node: GaleraNode): string {
  return process.env.DATABASE_URL!.replace(/@[^/]+\//, `@127.0.0.1:${nodePort(node)}/`);
}

/** A TCP proxy standing for the load balancer in front of a node; `repoint` moves it to another. */
export class NodeProxy {
  private proxy!: TcpProxy;

  private constructor(public node: GaleraNode) {}

  static async to(node: GaleraNode): Promise<NodeProxy> {
    const balancer = new NodeProxy(node);
    balancer.proxy = new TcpProxy('127.0.0.1', nodePort(node));
    balancer.proxy.port = await freeFixedPort();
    await balancer.proxy.start();
    return balancer;
  }

  /** The run's DATABASE_URL through this proxy. */
  get databaseUrl(): string {
    return process.env.DATABASE_URL!.replace(/@[^/]+\//, `@127.0.0.1:${this.proxy.port}/`);
  }

  /** What a load balancer does when its health check fails: every connection cut, new ones go to `node`. */
  async repoint(node: GaleraNode): Promise<void> {
    const port = this.proxy.port;
    await this.proxy.stop();
    this.proxy = new TcpProxy('127.0.0.1', nodePort(node));
    this.proxy.port = port;
    await this.proxy.start();
    this.node = node;
  }

  stop(): Promise<void> {
    return this.proxy.stop();
  }
}

async function cluster(...args: string[]): Promise<string> {
  const { stdout } = await run('bash', [SCRIPT, ...args], { timeout: 120_000 });
  return stdout;
}

export const killNode = (node: GaleraNode) => cluster('kill', String(node));
export const startNode = (node: GaleraNode) => cluster('start-node', String(node));
export const waitClusterWhole = () => cluster('wait-whole');
export const clusterStatus = () => cluster('status');

/** A pool on node N whose reads wait until the node has applied every commit the cluster made before them. */
export function syncedPool(node: GaleraNode): Pool {
  const pool = createPool({ uri: nodeDatabaseUrl(node), connectionLimit: 4, supportBigNumbers: true });
  pool.pool.on('connection', (connection) => void connection.query('SET SESSION wsrep_sync_wait = 1'));
  return pool;
}
