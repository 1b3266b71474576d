import { Injectable } from '@nestjs/common';
import { Propagation, Transactional } from '@nestjs-cls/transactional';
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
 * in the caller's transaction and throws outside one (Propagation.Mandatory). A row that stands
 * alone (a refused write, an audited read) is `recordAlone`, in a transaction of its own.
 */
@Injectable()
export class AuditLog {
  constructor(private readonly rows: AdminAuditRepository) {}

  @Transactional(Propagation.Mandatory)
  async record(entry: AuditEntry): Promise<void> {
    await this.rows.append(entry, new Date());
  }

  @Transactional(Propagation.RequiresNew)
  async recordAlone(entry: AuditEntry): Promise<void> {
    await this.rows.append(entry, new Date());
  }
}
