import { Module } from '@nestjs/common';
import { CallbackRecordRepository } from './callback-record.repository';
import { CommittedPaymentsCache } from './committed-payments.cache';
import { DeliveryLog } from './delivery-log';

@Module({
  providers: [CallbackRecordRepository, CommittedPaymentsCache, DeliveryLog],
  exports: [CallbackRecordRepository, CommittedPaymentsCache, DeliveryLog],
})
export class IdempotencyModule {}
