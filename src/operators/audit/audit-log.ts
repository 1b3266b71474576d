import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { Propagation, TransactionHost } from '@nestjs-cls/transactional';
import { AdminAuditRepository } from './admin-audit.repository';

export interface AuditEntry {
  operatorId: string;
  action: string;
  target: string;
  requestBody: unknown;
  result: unknown;
}

/**
 * The audit log: a change and its audit row commit together or not at all, so `record` runs only
 * in the caller's transaction and throws outside one (as Propagation.Mandatory would). A row that
 * stands alone (a refused write, an audited read) is `recordAlone`, in a transaction of its own.
 * Both go through this app's TransactionHost, not the decorators' process-wide one: tests run
 * several apps in one process.
 */
@Injectable()
export class AuditLog {
  constructor(
    private readonly rows: AdminAuditRepository,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {}

  async record(entry: AuditEntry): Promise<void> {
    if (!this.txHost.isTransactionActive()) {
      throw new Error(`the audit row of ${entry.action} must be written in its change's transaction: there is none`);
    }
    await this.rows.append(entry, new Date());
  }

  recordAlone(entry: AuditEntry): Promise<void> {
    return this.txHost.withTransaction(Propagation.RequiresNew, () => this.rows.append(entry, new Date()));
  }
}
