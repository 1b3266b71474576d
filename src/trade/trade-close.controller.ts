import { Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam } from '@nestjs/swagger';
import { ApiErrors } from '../platform/http/error.view';
import { toView } from '../order/dto/payment-order.view';
import { InternalApiGuard } from '../order/internal-api.guard';
import { ApiOrderApi } from '../order/order-api.openapi';
import { checkOrderNo, ORDER_NO } from '../order/order-no';
import { ClosedOrderView, TradeCloseService } from './trade-close.service';

/**
 * POST /payment-orders/:orderNo/close: at the channel first, then here. No transaction around
 * it: the channel calls must not hold database locks; the local close is its own compare-and-set.
 */
@ApiOrderApi()
@Controller('payment-orders')
@UseGuards(InternalApiGuard)
export class TradeCloseController {
  constructor(private readonly trades: TradeCloseService) {}

  @Post(':orderNo/close')
  @ApiOperation({
    summary: 'Close an unpaid order at its channel, then here: WAIT_PAY to CLOSED; closing a closed order again is 200',
  })
  @ApiParam({ name: 'orderNo', schema: { type: 'string', pattern: ORDER_NO.source } })
  @ApiOkResponse({ type: ClosedOrderView })
  @ApiErrors(
    [404, 'unknown order'],
    [409, 'the order is paid, here or at the channel'],
    [503, 'the channel did not answer: the order is not closed (retry)'],
  )
  @HttpCode(200)
  async close(@Param('orderNo') orderNo: string): Promise<ClosedOrderView> {
    const { order, channelClose } = await this.trades.close(checkOrderNo(orderNo));
    return { ...toView(order), channelClose };
  }
}
