import { Injectable, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MysqlDriver } from 'typeorm/driver/mysql/MysqlDriver.js';
import { isAwaitingDatabase } from './awaiting-database';

/**
 * On MariaDB (which runs what a `/*M! … *\/` comment holds; MySQL skips it), each session waits,
 * before a read or BEGIN, until its Galera node has applied what the cluster committed before
 * (wsrep_sync_wait's bit 1; the server's other bits kept): a payment delivered through one node
 * sees the order registered through another. Set per session, as MariaDB allows, so that a
 * cluster whose other applications keep the global default of 0 serves this service too. Outside
 * Galera (wsrep_on OFF) the variable changes nothing.
 */
export const GALERA_SYNC_WAIT = '/*M!, SESSION wsrep_sync_wait = @@GLOBAL.wsrep_sync_wait | 1 */';

/**
 * mysql2 escapes quotes in values with a backslash: under NO_BACKSLASH_ESCAPES that escaping would
 * no longer hold, and with multi-statement queries on (beginWithFirstStatement) a value could end a string
 * and start a statement. Each session turns the mode off, whatever the server's default.
 */
const SESSION_SETUP =
  'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED;' +
  ` SET SESSION sql_mode = REPLACE(@@SESSION.sql_mode, 'NO_BACKSLASH_ESCAPES', '') ${GALERA_SYNC_WAIT}`;

/**
 * Every pooled connection runs READ COMMITTED by default (and, on Galera, waits for the cluster's
 * commits before it reads: GALERA_SYNC_WAIT), so that a transaction costs one
 * START TRANSACTION instead of a SET TRANSACTION round trip before it. READ COMMITTED keeps the
 * relay's range scans free of gap locks, which would otherwise stall new outbox inserts; the
 * unique keys and compare-and-set updates do not depend on the level.
 */
@Injectable()
export class ReadCommittedSessions implements OnModuleInit {
  constructor(private readonly dataSource: DataSource) {}

  async onModuleInit(): Promise<void> {
    const pool = (this.dataSource.driver as MysqlDriver).pool as {
      on(event: 'connection', listener: (connection: { query(sql: string): void }) => void): void;
    };
    pool.on('connection', (connection) => connection.query(SESSION_SETUP));
    // TypeORM opened one connection to check the server before this hook existed; it is the only idle one
    // (none when the service started without the database).
    if (!isAwaitingDatabase(this.dataSource)) await this.dataSource.query(SESSION_SETUP);
  }
}
