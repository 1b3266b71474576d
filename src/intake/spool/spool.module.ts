import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { TerminusModule } from '@nestjs/terminus';
import { spoolConfig } from '../../platform/config/spool.config';
import { SettlementModule } from '../../settlement/settlement.module';
import { DeliverySpool } from './delivery-spool';
import { SpoolFallback } from './spool-fallback';
import { SPOOL_METRICS } from './spool-metrics';
import { SpoolReplayer } from './spool-replayer';
import { SpoolHealthIndicator } from './spool.health';

/** The durable spool, what the notify route and readiness need of it, and its replay through the settlement use case. */
@Module({
  imports: [ConfigModule.forFeature(spoolConfig), TerminusModule, SettlementModule],
  providers: [DeliverySpool, SpoolFallback, SpoolHealthIndicator, SpoolReplayer, ...SPOOL_METRICS],
  exports: [DeliverySpool, SpoolFallback, SpoolHealthIndicator, ...SPOOL_METRICS],
})
export class SpoolModule {}
