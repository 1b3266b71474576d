import { Injectable } from '@nestjs/common';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import { RetentionConfig } from '../../platform/config/retention.config';
import { daysBefore, RetentionTask } from '../../platform/retention/retention-task';
import { CallbackRecordRepository } from './callback-record.repository';

/** Empties the bytes (and large headers) of deliveries received RETENTION_RAW_DAYS ago; the rows and outcomes stay. */
@Injectable()
export class DeliveryBytesRetention implements RetentionTask {
  readonly table = 'callback_delivery';

  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly records: CallbackRecordRepository,
  ) {}

  pruneBatch(now: Date, retention: RetentionConfig): Promise<number> {
    return this.txHost.withTransaction(() =>
      this.records.pruneRawBytesBefore(daysBefore(now, retention.rawDays), now, retention.batchSize),
    );
  }
}
