import { Module } from '@nestjs/common';
import { AnomalyModule } from '../payments/anomaly/anomaly.module';
import { EventsModule } from '../events/events.module';
import { IdempotencyModule } from '../payments/idempotency/idempotency.module';
import { OrderModule } from '../order/order.module';
import { RefundModule } from '../refund/refund.module';
import { SETTLEMENT_METRICS } from './settlement-metrics';
import { PayProcedure } from './pay-procedure.repository';
import { Settlement } from './settlement.service';

/** Applying a verified notification, for every entry point: the notify route, the spool replay, the trade query. */
@Module({
  imports: [IdempotencyModule, OrderModule, AnomalyModule, EventsModule, RefundModule],
  providers: [Settlement, PayProcedure, ...SETTLEMENT_METRICS],
  exports: [Settlement, ...SETTLEMENT_METRICS],
})
export class SettlementModule {}
