import { createConnection } from 'mysql2/promise';

/** The server the benches create their databases on; it must be allowed to create and drop them. */
export const ADMIN_URL = process.env.BENCH_DATABASE_ADMIN_URL ?? 'mysql://root@127.0.0.1:3306';

/** Runs statements in order on one connection as the admin (CREATE DATABASE, DROP DATABASE, …). */
export async function runAsAdmin(statements: string[]): Promise<void> {
  const conn = await createConnection({ uri: ADMIN_URL, connectTimeout: 10_000 });
  try {
    for (const sql of statements) await conn.query(sql);
  } finally {
    await conn.end();
  }
}
