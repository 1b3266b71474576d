import { Injectable, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MysqlDriver } from 'typeorm/driver/mysql/MysqlDriver';

const SET_READ_COMMITTED = 'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED';

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
    pool.on('connection', (connection) => connection.query(SET_READ_COMMITTED));
    // TypeORM opened one connection to check the server before this hook existed; it is the only idle one.
    await this.dataSource.query(SET_READ_COMMITTED);
  }
}
