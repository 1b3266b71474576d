import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { redisConfig } from './redis.config';
import { CallbackRecordRepository } from './callback-record.repository';
import { CommittedPayments } from './committed-payments';
import { CommittedPaymentsCache } from './committed-payments.cache';
import { DeliveryLog } from './delivery-log';
import { FAST_PATH_METRICS } from './fast-path-metrics';
import { FastPathRedis } from './fast-path-redis';

@Module({
  imports: [ConfigModule.forFeature(redisConfig)],
  providers: [
    CallbackRecordRepository,
    CommittedPaymentsCache,
    FastPathRedis,
    CommittedPayments,
    DeliveryLog,
    ...FAST_PATH_METRICS,
  ],
  exports: [CallbackRecordRepository, CommittedPayments, DeliveryLog],
})
export class IdempotencyModule {}
