import { Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { PaymentOrderView, toView } from '../order/dto/payment-order.view';
import { InternalApiGuard } from '../order/internal-api.guard';
import { checkOrderNo } from '../order/order-no';
import { ChannelCloseView, TradeCloseService } from './trade-close.service';

/**
 * POST /payment-orders/:orderNo/close: at the channel first, then here. No transaction around
 * it: the channel calls must not hold database locks; the local close is its own compare-and-set.
 */
@Controller('payment-orders')
@UseGuards(InternalApiGuard)
export class TradeCloseController {
  constructor(private readonly trades: TradeCloseService) {}

  @Post(':orderNo/close')
  @HttpCode(200)
  async close(@Param('orderNo') orderNo: string): Promise<PaymentOrderView & { channelClose: ChannelCloseView[] }> {
    const { order, channelClose } = await this.trades.close(checkOrderNo(orderNo));
    return { ...toView(order), channelClose };
  }
}
