import { Inject, Logger, Module, OnApplicationBootstrap } from '@nestjs/common';
import { ConfigModule, ConfigType } from '@nestjs/config';
import { ChannelsModule } from '../channels/channels.module';
import { paymentQueryConfig } from './payment-query.config';
import { orderConfig } from './order.config';
import { serverConfig } from '../platform/config/server.config';
import { InternalApiGuard } from './internal-api.guard';
import { PaymentOrderController } from './payment-order.controller';
import { PaymentOrderRepository } from './payment-order.repository';
import { PaymentOrderService } from './payment-order.service';
import { ChannelPayments } from './channel-payments';
import { ChannelPaymentRepository } from './channel-payment.repository';

@Module({
  imports: [
    ConfigModule.forFeature(serverConfig),
    ConfigModule.forFeature(paymentQueryConfig),
    ConfigModule.forFeature(orderConfig),
    ChannelsModule,
  ],
  controllers: [PaymentOrderController],
  providers: [PaymentOrderRepository, PaymentOrderService, InternalApiGuard, ChannelPaymentRepository, ChannelPayments],
  exports: [PaymentOrderRepository, PaymentOrderService, InternalApiGuard, ChannelPaymentRepository],
})
export class OrderModule implements OnApplicationBootstrap {
  constructor(@Inject(serverConfig.KEY) private readonly config: ConfigType<typeof serverConfig>) {}

  /** Once per start, however many controllers use InternalApiGuard. */
  onApplicationBootstrap(): void {
    if (!this.config.internalApiToken) {
      new Logger(InternalApiGuard.name).warn('the order API is disabled: set INTERNAL_API_TOKEN to enable it');
    }
  }
}
