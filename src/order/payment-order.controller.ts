import { Body, Controller, Get, Param, Post, Res, UseGuards, UseInterceptors } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { TransactionInterceptor } from '../transaction/transaction.interceptor';
import { CreatePaymentOrderDto } from './dto/create-payment-order.dto';
import { PaymentOrderView, toView } from './dto/payment-order.view';
import { InternalApiGuard } from './internal-api.guard';
import { PaymentOrderService } from './payment-order.service';
import { checkOrderNo } from './order-no';

/** Registration and lookup; closing lives with the channel's side of the order (src/trade). */
@Controller('payment-orders')
@UseGuards(InternalApiGuard)
export class PaymentOrderController {
  constructor(private readonly orders: PaymentOrderService) {}

  @Post()
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
  async get(@Param('orderNo') orderNo: string): Promise<PaymentOrderView> {
    return toView(await this.orders.get(checkOrderNo(orderNo)));
  }
}
