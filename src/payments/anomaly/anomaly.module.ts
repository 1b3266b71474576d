import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { fourEyesConfig } from '../../operators/four-eyes.config';
import { AnomalyRepository } from './anomaly.repository';
import { AnomalyResolution } from './anomaly-resolution';
import { AnomalyResolutionRepository } from './anomaly-resolution.repository';

@Module({
  imports: [ConfigModule.forFeature(fourEyesConfig)],
  providers: [AnomalyRepository, AnomalyResolutionRepository, AnomalyResolution],
  exports: [AnomalyRepository, AnomalyResolution],
})
export class AnomalyModule {}
