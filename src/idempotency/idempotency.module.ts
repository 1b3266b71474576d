import { Module } from '@nestjs/common';
import { CallbackRecordRepository } from './callback-record.repository';

@Module({
  providers: [CallbackRecordRepository],
  exports: [CallbackRecordRepository],
})
export class IdempotencyModule {}
