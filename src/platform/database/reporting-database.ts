import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { DataSource } from 'typeorm';
import { GALERA_SYNC_WAIT } from './read-committed-sessions';
import { MysqlDriver } from 'typeorm/driver/mysql/MysqlDriver.js';
import { databaseConfig } from '../config/database.config';
import { isAwaitingDatabase } from './awaiting-database';
import { boundWaits, DATABASE_NOT_YET_ANSWERED } from './bounded-pool';
import { PoolWaitMetrics } from './pool-wait-metrics';
import { buildDataSourceOptions } from './data-source-options';
import { askServerFlavour, ServerFlavour } from './server-flavour';

/** Past the server's statement limit, for a connection that hangs on the network. */
const CLIENT_TIMEOUT_MARGIN_MS = 1000;

/**
 * The admin API's reads and the scrape-time gauges, on a small pool of their own
 * (REPORTING_POOL_SIZE), so that a flood of expensive reads queues here and never takes a
 * connection the notify path needs. Each session is read-only and stopped by the server after
 * REPORTING_STATEMENT_TIMEOUT_MS (MariaDB max_statement_time, MySQL MAX_EXECUTION_TIME: chosen by
 * the server's own VERSION(), asked once per pool, never by the URL's scheme), which also frees the
 * server, unlike a client-side timeout. Connected on first use, and again after a failure.
 */
export interface ReportingConnection {
  dataSource: DataSource;
  flavour: ServerFlavour;
}

@Injectable()
export class ReportingDatabase implements OnApplicationShutdown {
  private connecting?: Promise<ReportingConnection>;

  constructor(
    @Inject(databaseConfig.KEY) private readonly config: ConfigType<typeof databaseConfig>,
    private readonly main: DataSource,
    private readonly waits: PoolWaitMetrics,
  ) {}

  async dataSource(): Promise<DataSource> {
    return (await this.connection()).dataSource;
  }

  async connection(): Promise<ReportingConnection> {
    if (isAwaitingDatabase(this.main)) {
      throw Object.assign(new Error('the database has not answered since the start'), {
        code: DATABASE_NOT_YET_ANSWERED,
      });
    }
    this.connecting ??= this.connect().catch((error: unknown) => {
      this.connecting = undefined;
      throw error;
    });
    return this.connecting;
  }

  async onApplicationShutdown(): Promise<void> {
    const connection = await this.connecting?.catch(() => undefined);
    await connection?.dataSource.destroy();
  }

  private async connect(): Promise<ReportingConnection> {
    const { reporting } = this.config;
    // The same entities and server type as the main connection: admin reads map the same tables.
    const options = buildDataSourceOptions(
      { ...this.config, poolSize: reporting.poolSize },
      this.main.options.entities,
      this.main.options.type as ServerFlavour,
    );
    const dataSource = await new DataSource({
      ...options,
      multipleStatements: false,
      extra: { queueLimit: reporting.queueLimit },
    } as typeof options).initialize();
    boundWaits(
      dataSource,
      this.config.acquireTimeoutMs,
      reporting.statementTimeoutMs + CLIENT_TIMEOUT_MARGIN_MS,
      this.waits.of('reporting'),
    );
    const flavour = await askServerFlavour(dataSource).catch(async (error: unknown) => {
      await dataSource.destroy();
      throw error;
    });
    const setup = sessionSetup(flavour, reporting.statementTimeoutMs);
    const pool = (dataSource.driver as MysqlDriver).pool as {
      on(event: 'connection', listener: (connection: { query(sql: string): void }) => void): void;
    };
    pool.on('connection', (connection) => setup.forEach((sql) => connection.query(sql)));
    // The one connection TypeORM opened to check the server predates the listener.
    for (const sql of setup) await dataSource.query(sql);
    return { dataSource, flavour };
  }
}

function sessionSetup(flavour: ServerFlavour, statementTimeoutMs: number): string[] {
  const timeLimit =
    flavour === 'mariadb'
      ? `SET SESSION max_statement_time = ${statementTimeoutMs / 1000}`
      : `SET SESSION MAX_EXECUTION_TIME = ${statementTimeoutMs}`;
  return [
    timeLimit,
    'SET SESSION TRANSACTION READ ONLY',
    // As ReadCommittedSessions: mysql2's backslash escaping must hold, and on Galera reads see what the cluster committed.
    `SET SESSION sql_mode = REPLACE(@@SESSION.sql_mode, 'NO_BACKSLASH_ESCAPES', '') ${GALERA_SYNC_WAIT}`,
  ];
}
