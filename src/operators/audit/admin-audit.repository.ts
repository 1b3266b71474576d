import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { AuditEntry } from './audit-log';

/** admin_audit: appended to, in the caller's transaction; read by the admin views' queries. */
@Injectable()
export class AdminAuditRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async append(entry: AuditEntry, at: Date): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO admin_audit (operator_id, action, target, request_body, result, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
      [
        entry.operatorId,
        entry.action,
        entry.target.slice(0, 128),
        JSON.stringify(entry.requestBody ?? null),
        JSON.stringify(entry.result ?? null),
        at,
      ],
    );
  }
}
