import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { AnomalyModule } from '../payments/anomaly/anomaly.module';
import { ChannelsModule } from '../channels/channels.module';
import { fourEyesConfig } from '../operators/four-eyes.config';
import { refundConfig } from './refund.config';
import { serverConfig } from '../platform/config/server.config';
import { EventsModule } from '../events/events.module';
import { IdempotencyModule } from '../payments/idempotency/idempotency.module';
import { OrderModule } from '../order/order.module';
import { EmergencyRefundService } from './emergency-refund.service';
import { RefundAnomalyRepository } from './refund-anomaly.repository';
import { RefundApproval } from './refund-approval';
import { RefundExecutor } from './refund-executor';
import { RefundRepository } from './refund.repository';
import { RefundRetryWorker } from './refund-retry.worker';
import { RefundSettlement } from './refund-settlement';
import { Refunds } from './refunds';
import { ShopRefundController } from './shop-refund.controller';
import { UnsettledRefundsMetric } from './unsettled-refunds.metric';

@Module({
  imports: [
    ConfigModule.forFeature(refundConfig),
    ConfigModule.forFeature(fourEyesConfig),
    // InternalApiGuard (ShopRefundController) reads the internal API token.
    ConfigModule.forFeature(serverConfig),
    ChannelsModule,
    IdempotencyModule,
    OrderModule,
    AnomalyModule,
    EventsModule,
  ],
  controllers: [ShopRefundController],
  providers: [
    RefundRepository,
    RefundAnomalyRepository,
    RefundSettlement,
    RefundExecutor,
    RefundRetryWorker,
    EmergencyRefundService,
    UnsettledRefundsMetric,
    RefundApproval,
    Refunds,
  ],
  exports: [RefundRepository, RefundSettlement, RefundExecutor, Refunds],
})
export class RefundModule {}
