import { Body, Controller, Get, Param, Post, Res, UseGuards, UseInterceptors } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { ApiErrors } from '../platform/http/error.view';
import { TransactionInterceptor } from '../platform/transaction/transaction.interceptor';
import { CreatePaymentOrderDto } from './dto/create-payment-order.dto';
import { PaymentOrderView, toView } from './dto/payment-order.view';
import { InternalApiGuard } from './internal-api.guard';
import { ApiOrderApi } from './order-api.openapi';
import { PaymentOrderService } from './payment-order.service';
import { checkOrderNo, ORDER_NO } from './order-no';

/** Registration and lookup; closing lives with the channel's side of the order (src/trade). */
@ApiOrderApi()
@Controller('payment-orders')
@UseGuards(InternalApiGuard)
export class PaymentOrderController {
  constructor(private readonly orders: PaymentOrderService) {}

  @Post()
  @ApiOperation({ summary: 'Register an order awaiting payment (WAIT_PAY); idempotent on orderNo' })
  @ApiCreatedResponse({ type: PaymentOrderView, description: 'registered' })
  @ApiOkResponse({ type: PaymentOrderView, description: 'the same body again: the order as it is now' })
  @ApiErrors([400, 'malformed body or unknown field'], [409, 'this orderNo was registered with a different body'])
  @UseInterceptors(TransactionInterceptor)
  async register(
    @Body() dto: CreatePaymentOrderDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PaymentOrderView> {
    const { order, created } = await this.orders.register(dto);
    reply.status(created ? 201 : 200);
    return toView(order);
  }

  @Get(':orderNo')
  @ApiOperation({ summary: 'An order and its payment' })
  @ApiParam({ name: 'orderNo', schema: { type: 'string', pattern: ORDER_NO.source } })
  @ApiOkResponse({ type: PaymentOrderView })
  @ApiErrors([404, 'unknown order'])
  async get(@Param('orderNo') orderNo: string): Promise<PaymentOrderView> {
    return toView(await this.orders.get(checkOrderNo(orderNo)));
  }
}
