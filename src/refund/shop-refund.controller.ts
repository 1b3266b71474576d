import { Body, Controller, Param, Post, Res, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { InternalApiGuard } from '../order/internal-api.guard';
import { ApiOrderApi } from '../order/order-api.openapi';
import { checkOrderNo, ORDER_NO } from '../order/order-no';
import { ApiErrors } from '../platform/http/error.view';
import { ShopRefundDto, ShopRefundView, toShopRefundView } from './dto/shop-refund.dto';
import { Refunds } from './refunds';

/** The order service's refunds: what the shop gives back of a paid order, settled like every refund. */
@ApiOrderApi()
@Controller('payment-orders')
@UseGuards(InternalApiGuard)
export class ShopRefundController {
  constructor(private readonly refunds: Refunds) {}

  @Post(':orderNo/refunds')
  @ApiOperation({ summary: 'Refund (part of) what paid an order; idempotent on refundNo' })
  @ApiParam({ name: 'orderNo', schema: { type: 'string', pattern: ORDER_NO.source } })
  @ApiCreatedResponse({ type: ShopRefundView, description: 'recorded; the channel is called after the commit' })
  @ApiOkResponse({ type: ShopRefundView, description: 'the same refundNo and body again: the refund as it is now' })
  @ApiErrors(
    [400, 'malformed body or unknown field'],
    [404, 'unknown order'],
    [409, 'the order is not paid, or the refundNo was used for a different refund'],
    [422, 'an amount over what is left to refund'],
    [503, 'refunds are not configured for the channel that paid'],
  )
  async refund(
    @Param('orderNo') orderNo: string,
    @Body() dto: ShopRefundDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ShopRefundView> {
    const { refund, created } = await this.refunds.requestFromShop(checkOrderNo(orderNo), dto);
    reply.status(created ? 201 : 200);
    return toShopRefundView(refund);
  }
}
