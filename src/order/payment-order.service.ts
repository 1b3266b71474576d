import { Inject, Injectable } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { PaymentChannels } from '../channels/payment-channels';
import { nextQueryAt, paymentQueryConfig } from './payment-query.config';
import { DomainError } from '../domain/domain-error';
import { orderConfig } from './order.config';
import { CreatePaymentOrderDto } from './dto/create-payment-order.dto';
import { PaymentOrder } from './payment-order.entity';
import { PaymentOrderRepository } from './payment-order.repository';

@Injectable()
export class PaymentOrderService {
  constructor(
    private readonly orders: PaymentOrderRepository,
    private readonly channels: PaymentChannels,
    @Inject(paymentQueryConfig.KEY) private readonly queries: ConfigType<typeof paymentQueryConfig>,
    @Inject(orderConfig.KEY) private readonly config: ConfigType<typeof orderConfig>,
  ) {}

  /** Idempotent registration: the same body again returns the order; a different one conflicts. */
  async register(dto: CreatePaymentOrderDto): Promise<{ order: PaymentOrder; created: boolean }> {
    this.checkCurrency(dto);
    this.checkAccount(dto);
    this.checkOrderNoForChannels(dto);
    this.checkOrderForChannel(dto);
    const now = new Date();
    const created = await this.orders.insertIfAbsent({
      ...dto,
      nextQueryAt: nextQueryAt(this.queries.scheduleSeconds, now, now),
    });
    const order = await this.get(dto.orderNo);
    if (!created && (order.userId !== dto.userId || order.amount !== dto.amount || order.currency !== dto.currency)) {
      throw new DomainError(
        'OrderConflict',
        `order ${dto.orderNo} already exists with a different userId, amount or currency`,
      );
    }
    return { order, created };
  }

  async get(orderNo: string): Promise<PaymentOrder> {
    const order = await this.orders.find(orderNo);
    if (!order) throw new DomainError('OrderNotFound', `order ${orderNo} not found`);
    return order;
  }

  private checkCurrency({ currency }: CreatePaymentOrderDto): void {
    if (this.config.currencies.includes(currency)) return;
    throw new DomainError(
      'MalformedRequest',
      `currency ${currency} is not accepted (accepted: ${this.config.currencies.join(', ')})`,
    );
  }

  /**
   * The order number must be one the channel paying it takes; with no channel named, one at least
   * one channel takes. The channels compare it byte for byte, so must we (BinaryIdentifiers).
   */
  private checkOrderNoForChannels({ orderNo, channel }: CreatePaymentOrderDto): void {
    const candidates = channel === undefined ? this.channels.all : [this.channels.get(channel)!];
    const refusals = candidates.map((c) => c.orderNoRefusal(orderNo));
    if (refusals.some((refusal) => refusal === undefined)) return;
    throw new DomainError('MalformedRequest', `orderNo ${orderNo} cannot be paid: ${refusals.join('; ')}`);
  }

  /** The channel the order names may need more of it (such as the time it was sent, to query it later). */
  private checkOrderForChannel({ orderNo, channel, channelOrderTime }: CreatePaymentOrderDto): void {
    if (channel === undefined) return;
    const refusal = this.channels.get(channel)?.orderRegistrationRefusal?.({ orderNo, channelOrderTime });
    if (refusal) throw new DomainError('MalformedRequest', `order ${orderNo} for ${channel}: ${refusal}`);
  }

  /** A named account (and sub-merchant) must be one of the channel's: queries and closes go to it. */
  private checkAccount({ channel, merchantId, subMerchantId }: CreatePaymentOrderDto): void {
    if (merchantId === undefined && subMerchantId === undefined) return;
    if (channel === undefined) {
      throw new DomainError(
        'MalformedRequest',
        `${merchantId === undefined ? 'subMerchantId' : 'merchantId'} needs channel`,
      );
    }
    if (merchantId !== undefined && !this.channels.get(channel)?.accountIds().includes(merchantId)) {
      throw new DomainError('MalformedRequest', `merchantId ${merchantId} is not a ${channel} account of ours`);
    }
    if (
      subMerchantId !== undefined &&
      !this.channels.get(channel)?.subMerchantIds(merchantId).includes(subMerchantId)
    ) {
      const of = merchantId === undefined ? channel : `${channel} account ${merchantId}`;
      throw new DomainError('MalformedRequest', `subMerchantId ${subMerchantId} is not a sub-merchant of ${of}`);
    }
  }
}
