import { Channel } from '../../domain/notification';
import { ChannelRegistration } from '../channel-registration';
import { ALIPAY_PAYMENT_METHODS } from './alipay.payments';
import { alipayAccounts } from './alipay.accounts';
import { AlipayChannel } from './alipay.channel';
import { AlipayClient } from './alipay.client';
import { AlipayOptions, loadAlipayOptions, refuseUncheckedSellers } from './alipay.config';
import { AlipayVerifier } from './alipay.verifier';

/** Alipay openapi, as the registration list knows it. */
export const alipayChannel: ChannelRegistration<AlipayOptions> = {
  channel: Channel.Alipay,
  paymentMethods: ALIPAY_PAYMENT_METHODS.map((m) => m.name),
  loadOptions: loadAlipayOptions,
  accounts: alipayAccounts,
  create({ accounts, gatewayUrl, notifyMaxAgeSeconds, sellerCheckWaived }, calls, clock) {
    // The configuration's apps were checked at start; an app added through the merchant directory is checked here.
    refuseUncheckedSellers(accounts, sellerCheckWaived === true);
    const verifier = new AlipayVerifier(accounts, { notifyMaxAgeSeconds }, clock);
    const client = new AlipayClient(
      accounts,
      { gatewayUrl, timeoutMs: calls.requestTimeoutMs, downloadTimeoutMs: calls.billDownloadTimeoutMs },
      verifier,
    );
    return new AlipayChannel(verifier, client, sellerCheckWaived);
  },
};
