import { createConnection } from 'mysql2/promise';
import { loadDatabaseConfig } from '../config/database.config';

/** `npm run db:create`: creates the database DATABASE_URL names, if it does not exist yet. */
async function createDatabase(): Promise<void> {
  const url = new URL(loadDatabaseConfig().url);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/';
  const conn = await createConnection({ uri: url.toString() });
  try {
    await conn.query(`CREATE DATABASE IF NOT EXISTS \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    process.stdout.write(`database ${name} is ready\n`);
  } finally {
    await conn.end();
  }
}

createDatabase().catch((error: Error) => {
  process.stderr.write(`could not create the database: ${error.message}\n`);
  process.exit(1);
});
