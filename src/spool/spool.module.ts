import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { TerminusModule } from '@nestjs/terminus';
import { spoolConfig } from '../config/spool.config';
import { DeliverySpool } from './delivery-spool';
import { SpoolFallback } from './spool-fallback';
import { SPOOL_METRICS } from './spool-metrics';
import { SpoolHealthIndicator } from './spool.health';

/** The durable spool and what the notify path and readiness need of it; the replayer is SpoolReplayModule. */
@Module({
  imports: [ConfigModule.forFeature(spoolConfig), TerminusModule],
  providers: [DeliverySpool, SpoolFallback, SpoolHealthIndicator, ...SPOOL_METRICS],
  exports: [DeliverySpool, SpoolFallback, SpoolHealthIndicator, ...SPOOL_METRICS],
})
export class SpoolModule {}
