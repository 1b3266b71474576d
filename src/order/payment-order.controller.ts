import { Body, Controller, Get, HttpCode, Param, Post, Res, UseGuards, UseInterceptors } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { DomainError } from '../domain/domain-error';
import { TransactionInterceptor } from '../transaction/transaction.interceptor';
import { CreatePaymentOrderDto } from './dto/create-payment-order.dto';
import { PaymentOrderView, toView } from './dto/payment-order.view';
import { InternalApiGuard } from './internal-api.guard';
import { PaymentOrderService } from './payment-order.service';
import { ORDER_NO } from './order-no';

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

  @Post(':orderNo/close')
  @HttpCode(200)
  @UseInterceptors(TransactionInterceptor)
  async close(@Param('orderNo') orderNo: string): Promise<PaymentOrderView> {
    return toView(await this.orders.close(checkOrderNo(orderNo)));
  }
}

function checkOrderNo(orderNo: string): string {
  if (!ORDER_NO.test(orderNo)) throw new DomainError('OrderNotFound', `order ${orderNo.slice(0, 64)} not found`);
  return orderNo;
}
