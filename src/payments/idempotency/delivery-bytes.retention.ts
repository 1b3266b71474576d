import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { RetentionConfig } from '../../platform/config/retention.config';
import { WriteResult } from '../../platform/database/sql';
import { daysBefore, RetentionTask } from '../../platform/retention/retention-task';

/** Headers bigger than this (a channel's signature headers) go with the bytes they signed. */
const KEPT_HEADERS_MAX_BYTES = 256;

/** Empties the bytes (and large headers) of deliveries received RETENTION_RAW_DAYS ago; the rows and outcomes stay. */
@Injectable()
export class DeliveryBytesRetention implements RetentionTask {
  readonly table = 'callback_delivery';

  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  pruneBatch(now: Date, retention: RetentionConfig): Promise<number> {
    return this.txHost.withTransaction(async () => {
      const rows: Array<{ id: string }> = await this.txHost.tx.query(
        `SELECT id FROM callback_delivery WHERE raw_pruned_at IS NULL AND received_at < ?
         ORDER BY received_at LIMIT ? FOR UPDATE SKIP LOCKED`,
        [daysBefore(now, retention.rawDays), retention.batchSize],
      );
      if (rows.length === 0) return 0;
      const result: WriteResult = await this.txHost.tx.query(
        `UPDATE callback_delivery
         SET raw_body = '', headers = IF(LENGTH(headers) > ?, JSON_OBJECT(), headers), raw_pruned_at = ?
         WHERE id IN (?) AND raw_pruned_at IS NULL`,
        [KEPT_HEADERS_MAX_BYTES, now, rows.map((r) => String(r.id))],
      );
      return result.affectedRows;
    });
  }
}
