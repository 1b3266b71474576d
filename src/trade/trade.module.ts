import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { ChannelsModule } from '../channels/channels.module';
import { paymentQueryConfig } from '../order/payment-query.config';
import { serverConfig } from '../platform/config/server.config';
import { OrderModule } from '../order/order.module';
import { SettlementModule } from '../settlement/settlement.module';
import { ChannelCallRepository } from './channel-call.repository';
import { PaymentQueryWorker } from './payment-query.worker';
import { OrderExpiryWorker } from './order-expiry.worker';
import { TradeCloseController } from './trade-close.controller';
import { TradeCloseService } from './trade-close.service';
import { TradeQueryService } from './trade-query.service';
import { TradeTargets } from './trade-targets';

/** The channel's side of an order: asking about lost payments, and closing before closing here. */
@Module({
  imports: [
    ConfigModule.forFeature(paymentQueryConfig),
    ConfigModule.forFeature(serverConfig),
    ChannelsModule,
    OrderModule,
    SettlementModule,
  ],
  controllers: [TradeCloseController],
  providers: [
    TradeTargets,
    ChannelCallRepository,
    TradeQueryService,
    TradeCloseService,
    PaymentQueryWorker,
    OrderExpiryWorker,
  ],
  exports: [TradeQueryService],
})
export class TradeModule {}
