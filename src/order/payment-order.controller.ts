import { Body, Controller, Get, Param, Post, Res, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { ApiErrors } from '../platform/http/error.view';
import { TransactionRunner } from '../platform/transaction/transaction.runner';
import { ChannelPayments, checkNoPaymentFields } from './channel-payments';
import { CreatePaymentOrderDto } from './dto/create-payment-order.dto';
import { CreatedPaymentOrderView, PaymentOrderView, toPaymentView, toView } from './dto/payment-order.view';
import { InternalApiGuard } from './internal-api.guard';
import { ApiOrderApi } from './order-api.openapi';
import { PaymentOrderService } from './payment-order.service';
import { checkOrderNo, ORDER_NO } from './order-no';

/** Registration and lookup; closing lives with the channel's side of the order (src/trade). */
@ApiOrderApi()
@Controller('payment-orders')
@UseGuards(InternalApiGuard)
export class PaymentOrderController {
  constructor(
    private readonly orders: PaymentOrderService,
    private readonly payments: ChannelPayments,
    private readonly transactions: TransactionRunner,
  ) {}

  @Post()
  @ApiOperation({
    summary:
      'Register an order awaiting payment (WAIT_PAY); with channel and method, also create its payment at the channel and answer what the buyer pays with (docs/taking-a-payment.md). Idempotent on orderNo',
  })
  @ApiCreatedResponse({
    type: CreatedPaymentOrderView,
    description: 'registered (with method: and its payment created)',
  })
  @ApiOkResponse({
    type: CreatedPaymentOrderView,
    description: 'the same body again: the order as it is now (with method: the same buyer parameters while valid)',
  })
  @ApiErrors(
    [400, 'malformed body, unknown field, or what the method needs is missing'],
    [409, 'this orderNo was registered (or its payment created) with a different body, or it can no longer be paid'],
    [422, 'the channel refused to create the payment: its code and message in channelCode and channelMessage'],
    [
      503,
      'the channel gave no answer (timeout, 5xx) or another request is creating it: retry, the same terms are sent',
    ],
  )
  async register(
    @Body() dto: CreatePaymentOrderDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PaymentOrderView | CreatedPaymentOrderView> {
    if (dto.method !== undefined) {
      const { order, payment, created } = await this.payments.create(dto);
      reply.status(created ? 201 : 200);
      return { ...toView(order), payment: toPaymentView(payment) };
    }
    checkNoPaymentFields(dto);
    // Answered only after COMMIT, as before.
    const { order, created } = await this.transactions.run(() => this.orders.register(dto));
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
