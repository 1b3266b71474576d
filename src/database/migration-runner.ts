import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { DataSource } from 'typeorm';
import { databaseConfig } from '../config/database.config';

const MIGRATION_LOCK = 'payment-callback-service:migrations';
const LOCK_TIMEOUT_SECONDS = 120;

/**
 * Applies pending migrations at start. Replicas starting together would race on DDL, so the run is
 * serialised by a MySQL named lock; the ones that wait find nothing left to do.
 */
@Injectable()
export class MigrationRunner implements OnModuleInit {
  private readonly logger = new Logger(MigrationRunner.name);

  constructor(
    private readonly dataSource: DataSource,
    @Inject(databaseConfig.KEY) private readonly config: ConfigType<typeof databaseConfig>,
  ) {}

  /** Before any onApplicationBootstrap hook, so that no worker ever polls an unmigrated schema. */
  async onModuleInit(): Promise<void> {
    if (!this.config.runMigrations) return;
    const runner = this.dataSource.createQueryRunner();
    try {
      const [{ locked }] = await runner.query('SELECT GET_LOCK(?, ?) AS locked', [
        MIGRATION_LOCK,
        LOCK_TIMEOUT_SECONDS,
      ]);
      if (Number(locked) !== 1) throw new Error(`could not take the migration lock within ${LOCK_TIMEOUT_SECONDS}s`);
      try {
        const applied = await this.dataSource.runMigrations({ transaction: 'each' });
        if (applied.length > 0) this.logger.log(`applied migrations: ${applied.map((m) => m.name).join(', ')}`);
      } finally {
        await runner.query('SELECT RELEASE_LOCK(?)', [MIGRATION_LOCK]);
      }
    } finally {
      await runner.release();
    }
  }
}
