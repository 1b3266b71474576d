import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';

export interface AuditEntry {
  operatorId: string;
  action: string;
  target: string;
  requestBody: unknown;
  result: unknown;
}

/** Writes in the caller's transaction: the change and its audit row commit together or not at all. */
@Injectable()
export class AuditLog {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async record(entry: AuditEntry): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO admin_audit (operator_id, action, target, request_body, result, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
      [
        entry.operatorId,
        entry.action,
        entry.target.slice(0, 128),
        JSON.stringify(entry.requestBody ?? null),
        JSON.stringify(entry.result ?? null),
        new Date(),
      ],
    );
  }
}
