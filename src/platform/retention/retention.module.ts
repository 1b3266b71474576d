import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { retentionConfig } from '../config/retention.config';
import { RetentionPruner } from './retention-pruner';
import { RetentionWorker } from './retention.worker';

@Module({
  imports: [ConfigModule.forFeature(retentionConfig)],
  providers: [RetentionPruner, RetentionWorker],
})
export class RetentionModule {}
