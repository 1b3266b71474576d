import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { refundConfig } from '../../platform/config/refund.config';
import { AnomalyRepository } from './anomaly.repository';
import { AnomalyResolution } from './anomaly-resolution';

@Module({
  imports: [ConfigModule.forFeature(refundConfig)],
  providers: [AnomalyRepository, AnomalyResolution],
  exports: [AnomalyRepository, AnomalyResolution],
})
export class AnomalyModule {}
