import { Module } from '@nestjs/common';
import { AnomalyRepository } from './anomaly.repository';

@Module({
  providers: [AnomalyRepository],
  exports: [AnomalyRepository],
})
export class AnomalyModule {}
