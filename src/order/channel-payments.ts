import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigType } from '@nestjs/config';
import { CreatePaymentRequest, CreatePaymentResult, PayerDetails } from '../domain/channel-api';
import { DomainError } from '../domain/domain-error';
import { PaymentChannel } from '../channels/payment-channel';
import { PaymentChannels } from '../channels/payment-channels';
import { TransactionRunner } from '../platform/transaction/transaction.runner';
import { ChannelPayment, ChannelPaymentState } from './channel-payment.entity';
import { ChannelPaymentRepository } from './channel-payment.repository';
import { CreatePaymentOrderDto } from './dto/create-payment-order.dto';
import { orderConfig } from './order.config';
import { OrderStatus } from './order-status';
import { PaymentOrder } from './payment-order.entity';
import { PaymentOrderService } from './payment-order.service';

/** How often a request waiting on another's call looks at its result. */
const WAIT_STEP_MS = 100;
/** Beyond the call's own timeout: the claim of a call that died with its process lapses after this. */
const LEASE_MARGIN_MS = 5000;
const MIN_EXPIRY_MS = 60_000;
const MAX_EXPIRY_MS = 7 * 86400_000;

export interface CreatedPayment {
  order: PaymentOrder;
  payment: ChannelPayment;
  /** Whether this request registered the order. */
  created: boolean;
}

/**
 * POST /payment-orders with `method`: registers the order and creates its payment at the channel,
 * with terms that are the order's by construction (amount, currency, order number, account,
 * sub-merchant, this service's notify URL, the order's expiry), fixed once per order in
 * channel_payment so that every call, retries included, sends the same request.
 *
 * One call at a time per order, on every replica: a call is made only by the request whose
 * conditional UPDATE claimed it (ChannelPaymentRepository.claimCall). Concurrent identical requests
 * wait (bounded by the call's timeout) for that call's stored result and answer it; a different
 * body under the same order number is a 409. The call is made outside any transaction.
 */
@Injectable()
export class ChannelPayments {
  private readonly logger = new Logger(ChannelPayments.name);

  constructor(
    private readonly orders: PaymentOrderService,
    private readonly payments: ChannelPaymentRepository,
    private readonly channels: PaymentChannels,
    private readonly transactions: TransactionRunner,
    @Inject(orderConfig.KEY) private readonly config: ConfigType<typeof orderConfig>,
  ) {}

  private get leaseMs(): number {
    return this.channels.callTimeoutMs + LEASE_MARGIN_MS;
  }

  async create(dto: CreatePaymentOrderDto): Promise<CreatedPayment> {
    const { channel, method } = this.methodOf(dto);
    const notifyBaseUrl = this.notifyBaseUrl();
    const merchantId = this.accountOf(channel, dto);
    const now = new Date();
    const expiresAt = this.expiryOf(dto, now);
    const hash = requestHash(dto, merchantId);
    const channelOrderTime = channel.orderTimeOf?.(now);
    const { order, created } = await this.transactions.run(async () => {
      const registered = await this.orders.register({ ...dto, merchantId, channelOrderTime });
      checkSameOrder(registered.order, channel, merchantId, dto.subMerchantId);
      const request: CreatePaymentRequest = {
        orderNo: dto.orderNo,
        merchantId,
        ...(dto.subMerchantId === undefined ? {} : { subMerchantId: dto.subMerchantId }),
        ...(dto.appId === undefined ? {} : { appId: dto.appId }),
        ...(dto.subAppId === undefined ? {} : { subAppId: dto.subAppId }),
        amount: registered.order.amount,
        currency: registered.order.currency,
        description: dto.description!,
        method: method.name,
        notifyBaseUrl,
        expiresAt,
        // The order's own, recorded at its registration: the channel keys the trade by it.
        ...(channel.orderTimeOf && registered.order.channelOrderTime
          ? { channelOrderTime: registered.order.channelOrderTime }
          : {}),
        payer: payerOf(dto),
      };
      const refusal = channel.createPaymentRefusal?.(request);
      if (refusal) throw new DomainError('MalformedRequest', `order ${dto.orderNo}: ${refusal}`);
      const terms = { orderNo: dto.orderNo, channel: channel.channel, method: method.name, requestHash: hash };
      await this.payments.insertIfAbsent({ ...terms, terms: JSON.stringify(request), expiresAt }, now);
      return registered;
    });
    return { order, created, payment: await this.settle(order.orderNo, hash, channel) };
  }

  /** The order's payment, created: this request's call, or the one another request made. */
  private async settle(orderNo: string, hash: string, channel: PaymentChannel): Promise<ChannelPayment> {
    const deadline = Date.now() + this.leaseMs;
    let waitedOn: number | undefined;
    for (;;) {
      const payment = (await this.payments.find(orderNo))!;
      if (payment.requestHash !== hash) {
        throw new DomainError('OrderConflict', `order ${orderNo}'s payment was created with a different request`);
      }
      const now = new Date();
      if (payment.state === ChannelPaymentState.Created && payment.validUntil! > now) return payment;
      if (payment.state === ChannelPaymentState.Refused) throw refused(channel, payment);
      if (payment.state === ChannelPaymentState.Retry && payment.attempts === waitedOn) throw unanswered(payment);
      const lapsed = payment.state !== ChannelPaymentState.Creating || payment.leaseUntil! <= now;
      if (lapsed) {
        const leaseUntil = new Date(now.getTime() + this.leaseMs);
        const attempt = await this.transactions.run(() => this.payments.claimCall(orderNo, now, leaseUntil));
        if (attempt !== undefined) return this.call(channel, payment, attempt);
        await this.checkStillPayable(orderNo, payment, leaseUntil);
      } else {
        waitedOn = payment.attempts;
      }
      if (Date.now() >= deadline) {
        throw new DomainError(
          'ChannelUnavailable',
          `order ${orderNo}'s payment is being created by another request; retry`,
        );
      }
      await sleep(WAIT_STEP_MS);
    }
  }

  /** The claimed call: its result stored for every request of the order, then answered. */
  private async call(channel: PaymentChannel, payment: ChannelPayment, attempt: number): Promise<ChannelPayment> {
    const terms = JSON.parse(payment.terms) as CreatePaymentRequest & { expiresAt: string };
    const request: CreatePaymentRequest = { ...terms, expiresAt: new Date(terms.expiresAt) };
    let result: CreatePaymentResult;
    try {
      result = await channel.createPayment!(request);
    } catch (error) {
      // The port never throws; a bug that does is no word from the channel.
      this.logger.error(`order ${payment.orderNo}: createPayment threw`, (error as Error).stack);
      result = { outcome: 'RETRY', detail: 'the channel adapter failed' };
    }
    const stored = await this.transactions.run(() =>
      this.payments.storeResult(payment.orderNo, attempt, stateOf(result, request)),
    );
    if (!stored) {
      throw new DomainError('ChannelUnavailable', `order ${payment.orderNo}'s payment call outlived its claim; retry`);
    }
    if (result.outcome === 'RETRY') {
      this.logger.warn(`order ${payment.orderNo}: ${channel.channel} create, no answer: ${result.detail}`);
    }
    const now = (await this.payments.find(payment.orderNo))!;
    if (now.state === ChannelPaymentState.Refused) throw refused(channel, now);
    if (now.state === ChannelPaymentState.Retry) throw unanswered(now);
    return now;
  }

  /** Why a claim was not won although no call is in flight: the order can no longer be paid. */
  private async checkStillPayable(orderNo: string, payment: ChannelPayment, leaseUntil: Date): Promise<void> {
    const order = await this.orders.get(orderNo);
    if (order.status !== OrderStatus.WaitPay) {
      throw new DomainError('OrderConflict', `order ${orderNo} is ${order.status}: no payment is created for it`);
    }
    if (payment.expiresAt <= leaseUntil) {
      throw new DomainError(
        'OrderConflict',
        `order ${orderNo} expires at ${payment.expiresAt.toISOString()}: too late to create its payment`,
      );
    }
  }

  private methodOf(dto: CreatePaymentOrderDto): {
    channel: PaymentChannel;
    method: { name: string; needs: readonly (keyof PayerDetails)[] };
  } {
    if (dto.channel === undefined) throw new DomainError('MalformedRequest', 'method needs channel');
    if (dto.channelOrderTime !== undefined) {
      throw new DomainError(
        'MalformedRequest',
        "channelOrderTime is the service's own when it creates the payment (method): leave it out",
      );
    }
    if (dto.description === undefined) throw new DomainError('MalformedRequest', 'method needs description');
    const channel = this.channels.get(dto.channel)!;
    const methods = channel.paymentMethods ?? [];
    const method = methods.find((m) => m.name === dto.method);
    if (!method) {
      const names = methods.map((m) => m.name).join(', ');
      throw new DomainError(
        'MalformedRequest',
        names
          ? `method ${dto.method} is not one of ${dto.channel}'s: ${names}`
          : `${dto.channel} payments are not created here: register the order without method`,
      );
    }
    const missing = method.needs.filter((field) => dto.payer?.[field] === undefined);
    if (missing.length > 0) {
      throw new DomainError(
        'MalformedRequest',
        `method ${method.name} needs ${missing.map((field) => `payer.${field}`).join(', ')}`,
      );
    }
    return { channel, method };
  }

  private notifyBaseUrl(): string {
    if (!this.config.publicBaseUrl) {
      throw new DomainError(
        'FeatureDisabled',
        'payments are not created here: set PUBLIC_BASE_URL (where the channels reach this service) to enable',
      );
    }
    return `${this.config.publicBaseUrl}/notify`;
  }

  /** The account the payment is created at: the named one, or the channel's only one whose API can be called. */
  private accountOf(channel: PaymentChannel, dto: CreatePaymentOrderDto): string {
    const accounts = channel.apiAccounts();
    const merchantId = dto.merchantId ?? (accounts.length === 1 ? accounts[0] : undefined);
    if (merchantId === undefined) {
      throw new DomainError(
        'MalformedRequest',
        accounts.length === 0
          ? `${channel.channel} has no account whose API can be called`
          : `merchantId is needed: ${channel.channel} has several accounts (${accounts.join(', ')})`,
      );
    }
    const unavailable = channel.apiUnavailableReason(merchantId);
    if (unavailable) throw new DomainError('MalformedRequest', unavailable);
    return merchantId;
  }

  /** The order's expiry, in whole seconds (the channels' resolution): the shop's, or the default. */
  private expiryOf(dto: CreatePaymentOrderDto, now: Date): Date {
    const at = dto.expiresAt
      ? new Date(dto.expiresAt)
      : new Date(now.getTime() + this.config.paymentExpirySeconds * 1000);
    const expiresAt = new Date(Math.floor(at.getTime() / 1000) * 1000);
    const ahead = expiresAt.getTime() - now.getTime();
    if (dto.expiresAt !== undefined && (ahead < MIN_EXPIRY_MS || ahead > MAX_EXPIRY_MS)) {
      throw new DomainError('MalformedRequest', 'expiresAt must be at least a minute and at most 7 days ahead');
    }
    return expiresAt;
  }
}

/** An order registered before (without method) must be the one the payment is created for. */
function checkSameOrder(
  order: PaymentOrder,
  channel: PaymentChannel,
  merchantId: string,
  subMerchantId: string | undefined,
): void {
  if (
    order.channel !== channel.channel ||
    order.merchantId !== merchantId ||
    order.subMerchantId !== (subMerchantId ?? null)
  ) {
    throw new DomainError(
      'OrderConflict',
      `order ${order.orderNo} is registered for another channel, account or sub-merchant`,
    );
  }
}

function payerOf(dto: CreatePaymentOrderDto): PayerDetails {
  return Object.fromEntries(Object.entries(dto.payer ?? {}).filter(([, value]) => value !== undefined));
}

/** The shop's request, canonical: the same request again hashes the same; any other field differs. */
export function requestHash(dto: CreatePaymentOrderDto, merchantId: string): string {
  const canonical = {
    orderNo: dto.orderNo,
    userId: dto.userId,
    amount: dto.amount,
    currency: dto.currency,
    channel: dto.channel,
    merchantId,
    subMerchantId: dto.subMerchantId ?? null,
    method: dto.method,
    description: dto.description,
    expiresAt: dto.expiresAt === undefined ? null : new Date(dto.expiresAt).getTime(),
    appId: dto.appId ?? null,
    subAppId: dto.subAppId ?? null,
    payer: Object.fromEntries(Object.entries(payerOf(dto)).sort(([a], [b]) => a.localeCompare(b))),
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

function stateOf(
  result: CreatePaymentResult,
  request: CreatePaymentRequest,
): Parameters<ChannelPaymentRepository['storeResult']>[2] {
  switch (result.outcome) {
    case 'CREATED':
      return {
        state: 'CREATED',
        buyer: JSON.stringify(result.buyer),
        // Never payable here after the order's expiry, whatever the channel says.
        validUntil: new Date(Math.min(result.validUntil.getTime(), request.expiresAt.getTime())),
        channelTradeId: result.channelTradeId ?? null,
      };
    case 'REFUSED':
      return { state: 'REFUSED', code: result.code, message: result.message };
    case 'RETRY':
      return { state: 'RETRY', code: 'NO_ANSWER', message: result.detail };
  }
}

function refused(channel: PaymentChannel, payment: ChannelPayment): DomainError {
  const code = payment.failureCode ?? '';
  const message = payment.failureMessage ?? '';
  return new DomainError('ChannelRefused', `${channel.channel} refused the payment: ${code} ${message}`.trim(), {
    channelCode: code,
    channelMessage: message,
  });
}

function unanswered(payment: ChannelPayment): DomainError {
  return new DomainError(
    'ChannelUnavailable',
    `the channel gave no answer to create order ${payment.orderNo}'s payment (${payment.failureMessage ?? 'no answer'}); retry: the same terms are sent again`,
  );
}

/** The fields of a payment created here mean nothing without method: refused rather than ignored. */
export function checkNoPaymentFields(dto: CreatePaymentOrderDto): void {
  const given = (['description', 'expiresAt', 'appId', 'subAppId', 'payer'] as const).filter(
    (f) => dto[f] !== undefined,
  );
  if (given.length > 0) throw new DomainError('MalformedRequest', `${given.join(', ')} need method`);
}
