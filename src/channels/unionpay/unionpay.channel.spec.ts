import { UnionpayChannel } from './unionpay.channel';
import { UnionpayClient } from './unionpay.client';
import { UnionpayVerifier } from './unionpay.verifier';

describe(UnionpayChannel.name, () => {
  // The members under test ask neither the verifier nor the client.
  const sut = new UnionpayChannel({} as UnionpayVerifier, {} as UnionpayClient, {});

  it("should take UnionPay's orderId rule: 8 to 40 letters or digits", () => {
    expect(sut.orderNoRefusal('ORDER001')).toBeUndefined();
    expect(sut.orderNoRefusal('A'.repeat(40))).toBeUndefined();
    for (const refused of ['ORDER01', 'A'.repeat(41), 'ORDER_0001', 'ORDER-0001']) {
      expect(sut.orderNoRefusal(refused)).toMatch(/8 to 40 letters or digits/);
    }
  });

  it('should take an order for UnionPay only with the txnTime its consumption is sent with', () => {
    expect(sut.orderRegistrationRefusal({ orderNo: 'ORDER001', channelOrderTime: '20261129103000' })).toBeUndefined();
    expect(sut.orderRegistrationRefusal({ orderNo: 'ORDER001' })).toMatch(/channelOrderTime .*is required/);
  });

  it('should not guess the txnTime of an order registered without one: FAILED, and the client is not asked', async () => {
    // The client is an empty object: a call would throw.
    await expect(sut.queryTrade({ orderNo: 'ORDER001', merchantId: '777290058167151' })).resolves.toEqual({
      outcome: 'FAILED',
      detail: "order ORDER001 was registered without channelOrderTime (UnionPay's txnTime), so it cannot be queried",
    });
  });

  it('should mask the card number and the payer fields, and leave the rest as received', () => {
    const body = 'accNo=6216261000000000018&merId=777290058167151&customerInfo=e3Bob25lTm89MTM4MDAwMDAwMDB9&txnAmt=1';

    expect(sut.maskPayer(Buffer.from(body)).toString()).toBe(
      `accNo=62${'*'.repeat(15)}18&merId=777290058167151&customerInfo=e3${'*'.repeat(24)}B9&txnAmt=1`,
    );
  });

  it('should answer a close as not applicable: UnionPay has none', async () => {
    await expect(sut.closeTrade({ orderNo: 'ORDER001', merchantId: '777290058167151' })).resolves.toMatchObject({
      outcome: 'NOT_APPLICABLE',
    });
  });

  it('should ack with any 200 and make UnionPay retry with anything else', () => {
    expect(sut.successReply()).toMatchObject({ status: 200 });
    expect(sut.failureReply(401, 'signature does not verify')).toMatchObject({
      status: 401,
      headers: { 'x-fail-reason': 'signature does not verify' },
    });
    expect(sut.failureReply(200, 'odd').status).not.toBe(200);
  });
});
