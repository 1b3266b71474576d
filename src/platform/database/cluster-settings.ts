import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isAwaitingDatabase } from './awaiting-database';

/**
 * The server variables exactly-once depends on when the server is a Galera node. wsrep_sync_wait is
 * not among them: every session of the service sets it for itself (GALERA_SYNC_WAIT), whatever the
 * node's global value.
 */
const VARIABLES = ['wsrep_on', 'binlog_format', 'innodb_autoinc_lock_mode'] as const;
export type ClusterVariables = Partial<Record<(typeof VARIABLES)[number], string>>;

/**
 * What is wrong with a Galera node's settings for this service, one sentence each; none when the
 * server is no Galera node (wsrep_on absent or OFF: a single server, or MySQL).
 */
export function galeraSettingProblems(variables: ClusterVariables): string[] {
  if (variables.wsrep_on?.toUpperCase() !== 'ON') return [];
  const problems: string[] = [];
  if (variables.binlog_format?.toUpperCase() !== 'ROW') {
    problems.push(
      `binlog_format is ${variables.binlog_format ?? 'unset'}, Galera replicates writes only with binlog_format=ROW`,
    );
  }
  if (variables.innodb_autoinc_lock_mode !== '2') {
    problems.push(
      `innodb_autoinc_lock_mode is ${variables.innodb_autoinc_lock_mode ?? 'unset'}, Galera needs innodb_autoinc_lock_mode=2 (interleaved)`,
    );
  }
  return problems;
}

/**
 * At start, asks the server whether it is a Galera node and refuses to start on one whose settings
 * would let a payment's rows replicate wrong, naming each setting. On Galera, conflicting writes on
 * two nodes meet at COMMIT (certification) and are answered as the transient conflicts they are.
 */
@Injectable()
export class ClusterSettingsCheck implements OnModuleInit {
  private readonly logger = new Logger(ClusterSettingsCheck.name);

  constructor(private readonly dataSource: DataSource) {}

  async onModuleInit(): Promise<void> {
    // Started without the database (spool): nothing to ask yet; the node's settings are checked at the next start.
    if (isAwaitingDatabase(this.dataSource) || !this.dataSource.isInitialized) return;
    const rows = await this.dataSource.query<Array<{ Variable_name: string; Value: string }>>(
      `SHOW GLOBAL VARIABLES WHERE Variable_name IN (${VARIABLES.map(() => '?').join(', ')})`,
      [...VARIABLES],
    );
    const variables = Object.fromEntries(rows.map((r) => [r.Variable_name.toLowerCase(), r.Value])) as ClusterVariables;
    const problems = galeraSettingProblems(variables);
    if (problems.length > 0) {
      throw new Error(
        `this database server is a Galera node with settings exactly-once needs changed: ${problems.join('; ')}`,
      );
    }
    if (variables.wsrep_on?.toUpperCase() === 'ON')
      this.logger.log(
        "the database server is a Galera node; its settings are as exactly-once needs, and the service's sessions wait for the cluster's commits (wsrep_sync_wait)",
      );
  }
}
