import { Injectable, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MysqlDriver } from 'typeorm/driver/mysql/MysqlDriver.js';
import { isAwaitingDatabase } from './awaiting-database';

/**
 * mysql2 escapes quotes in values with a backslash: under NO_BACKSLASH_ESCAPES that escaping would
 * no longer hold, and with multi-statement queries on (beginWithFirstStatement) a value could end a string
 * and start a statement. Each session turns the mode off, whatever the server's default.
 */
const SESSION_SETUP =
  'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED;' +
  " SET SESSION sql_mode = REPLACE(@@SESSION.sql_mode, 'NO_BACKSLASH_ESCAPES', '')";

/**
 * Every pooled connection runs READ COMMITTED by default, so that a transaction costs one
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
