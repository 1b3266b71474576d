import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { OperatorsModule } from '../operators/operators.module';
import { ChannelsModule } from '../channels/channels.module';
import { reconciliationConfig } from './reconciliation.config';
import { RefundModule } from '../refund/refund.module';
import { TradeModule } from '../trade/trade.module';
import { DiscrepanciesMetric } from './discrepancies.metric';
import { ReconciliationController } from './reconciliation.controller';
import { ReconciliationRepository } from './reconciliation.repository';
import { ReconciliationScheduler } from './reconciliation.scheduler';
import { ReconciliationService } from './reconciliation.service';
import { ReconciliationViews } from './reconciliation-views.queries';

/** Daily reconciliation of our payments and refunds with the channels' trade bills. */
@Module({
  imports: [ConfigModule.forFeature(reconciliationConfig), ChannelsModule, TradeModule, OperatorsModule, RefundModule],
  controllers: [ReconciliationController],
  providers: [
    ReconciliationRepository,
    ReconciliationService,
    ReconciliationScheduler,
    ReconciliationViews,
    DiscrepanciesMetric,
  ],
  exports: [ReconciliationService],
})
export class ReconciliationModule {}
