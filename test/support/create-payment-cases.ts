/**
 * The cases every channel's create-payment suite shares, whatever the channel's API: identical
 * requests at once make one call to the channel, a refusal is answered 422 again without a second
 * call, and an unavailable channel is answered 503 and sent the same terms again. Each suite calls
 * these from its own test and checks the call as its channel makes it.
 */
import { CreatedPayment } from '../../src/order/channel-payments';
import { CreatePaymentOrderDto } from '../../src/order/dto/create-payment-order.dto';
import { domainFailure } from './medium';

/** A channel's create-payment use case, and the calls its fake gateway recorded for an order. */
export interface CreatingChannel<Call> {
  create(dto: CreatePaymentOrderDto): Promise<CreatedPayment>;
  callsFor(orderNo: string): Call[];
}

/** `times` identical requests at once: one call to the channel, and one of the answers created the payment. */
export async function createdOnceForConcurrentRequests<Call>(
  channel: CreatingChannel<Call>,
  dto: CreatePaymentOrderDto,
  times = 10,
): Promise<{ answers: CreatedPayment[]; call: Call }> {
  const answers = await Promise.all(Array.from({ length: times }, () => channel.create(dto)));

  const calls = channel.callsFor(dto.orderNo);
  expect(calls).toHaveLength(1);
  expect(answers.filter((a) => a.created)).toHaveLength(1);
  return { answers, call: calls[0] };
}

/** The channel refuses (`refuse` scripts it): 422 ChannelRefused naming `reason`, twice, for one call. */
export async function refusedAgainWithoutSecondCall<Call>(
  channel: CreatingChannel<Call>,
  dto: CreatePaymentOrderDto,
  refuse: () => void,
  reason: string,
): Promise<void> {
  refuse();

  const first = await domainFailure(channel.create(dto));
  const again = await domainFailure(channel.create(dto));

  for (const failure of [first, again]) {
    expect(failure).toMatchObject({ code: 'ChannelRefused', status: 422 });
    expect(failure.message).toContain(reason);
  }
  expect(channel.callsFor(dto.orderNo)).toHaveLength(1);
}

/**
 * The channel is unavailable once (`outage` scripts it): 503 ChannelUnavailable, then the same
 * request again creates the payment. The calls are the caller's to compare, as its channel sends them.
 */
export async function unavailableThenCreated<Call>(
  channel: CreatingChannel<Call>,
  dto: CreatePaymentOrderDto,
  outage: () => void,
): Promise<{ payment: CreatedPayment['payment']; calls: Call[] }> {
  outage();

  const failure = await domainFailure(channel.create(dto));
  const { payment } = await channel.create(dto);

  expect(failure).toMatchObject({ code: 'ChannelUnavailable', status: 503 });
  expect(payment.state).toBe('CREATED');
  return { payment, calls: channel.callsFor(dto.orderNo) };
}
