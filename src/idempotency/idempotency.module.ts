import { Module } from '@nestjs/common';
import { CallbackRecordRepository } from './callback-record.repository';
import { CommittedPaymentsCache } from './committed-payments.cache';
import { DuplicateDeliveryRecorder } from './duplicate-delivery.recorder';

@Module({
  providers: [CallbackRecordRepository, CommittedPaymentsCache, DuplicateDeliveryRecorder],
  exports: [CallbackRecordRepository, CommittedPaymentsCache, DuplicateDeliveryRecorder],
})
export class IdempotencyModule {}
