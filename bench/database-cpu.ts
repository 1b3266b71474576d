import { readdirSync, readFileSync } from 'node:fs';
import { createConnection } from 'mysql2/promise';
import { processCpuSeconds } from './proc-stat';

const SERVER_NAMES = ['mariadbd', 'mysqld'];

/** The database server's CPU seconds so far (all its threads); undefined when it is not a process of this machine. */
export type DatabaseCpu = () => number | undefined;

/**
 * Reads the CPU time of the database server the benchmark uses, when that server runs on this
 * machine: the pid its @@pid_file names, or else the one mariadbd/mysqld process in /proc (a
 * server in a container writes a pid of its own namespace). Remote or ambiguous: undefined ("n/a").
 */
export async function databaseCpu(adminUrl: string): Promise<DatabaseCpu> {
  if (!isLoopbackUrl(adminUrl)) return () => undefined;
  const pid = serverPid(await pidFileOf(adminUrl));
  return pid === undefined ? () => undefined : () => processCpuSeconds(pid);
}

export function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\./.test(host);
}

/** CPU milliseconds per unit of work, to two decimals; undefined when either reading is. */
export function msPer(before: number | undefined, after: number | undefined, units: number): number | undefined {
  if (before === undefined || after === undefined || units <= 0) return undefined;
  return Math.round(((after - before) * 1000 * 100) / units) / 100;
}

async function pidFileOf(adminUrl: string): Promise<string | undefined> {
  const conn = await createConnection({ uri: adminUrl });
  try {
    const [rows] = await conn.query('SELECT @@pid_file AS file');
    return (rows as Array<{ file: string | null }>)[0].file ?? undefined;
  } finally {
    await conn.end();
  }
}

function serverPid(pidFile: string | undefined): number | undefined {
  const fromFile = pidFile ? Number(readOrEmpty(pidFile).trim()) : NaN;
  if (Number.isInteger(fromFile) && isServer(fromFile)) return fromFile;
  const servers = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter(isServer);
  return servers.length === 1 ? servers[0] : undefined;
}

function isServer(pid: number): boolean {
  return SERVER_NAMES.includes(readOrEmpty(`/proc/${pid}/comm`).trim());
}

function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/**
 * The per-delivery figure less what the server spent at its idle rate over the same window: an
 * estimate of this run's own share on a server others use too (their load is assumed steady).
 */
export function netOfIdle(
  msPerDelivery: number | undefined,
  idleMsPerSecond: number | undefined,
  seconds: number,
  deliveries: number,
): number | undefined {
  if (msPerDelivery === undefined || idleMsPerSecond === undefined || deliveries <= 0) return undefined;
  const net = msPerDelivery - (idleMsPerSecond * seconds) / deliveries;
  return Math.max(0, Math.round(net * 100) / 100);
}
