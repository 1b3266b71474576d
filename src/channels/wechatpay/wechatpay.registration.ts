import { Channel } from '../../domain/notification';
import { ChannelRegistration } from '../channel-registration';
import { WECHATPAY_PAYMENT_METHODS } from './wechatpay.payments';
import { wechatpayAccounts } from './wechatpay.accounts';
import { WechatpayChannel } from './wechatpay.channel';
import { WechatpayClient } from './wechatpay.client';
import { loadWechatpayOptions, WechatpayOptions } from './wechatpay.config';
import { WechatpayVerifier } from './wechatpay.verifier';
import { createWechatpayV2 } from './v2/wechatpay-v2';
import { withAddedSubMerchants } from './wechatpay.partner';
import { withApiKeysRead } from './wechatpay.api-keys';

/** WeChat Pay (APIv3; APIv2's XML notifications, and its calls for accounts with only an APIv2 key), as the registration list knows it. */
export const wechatpayChannel: ChannelRegistration<WechatpayOptions> = {
  channel: Channel.Wechatpay,
  paymentMethods: WECHATPAY_PAYMENT_METHODS.map((m) => m.name),
  loadOptions: loadWechatpayOptions,
  accounts: wechatpayAccounts,
  create({ accounts: configured, api }, calls, clock) {
    // The API keys' files read here, on every build: the adapter is the only place that holds the keys.
    const accounts = withApiKeysRead(configured);
    const verifier = new WechatpayVerifier(accounts, clock);
    const client = new WechatpayClient(
      accounts,
      { baseUrl: api.baseUrl, timeoutMs: calls.requestTimeoutMs, downloadTimeoutMs: calls.billDownloadTimeoutMs },
      verifier,
    );
    const v2 = createWechatpayV2(accounts, api, calls, clock);
    const options = { refundNotifyUrl: api.refundNotifyUrl };
    return new WechatpayChannel(accounts, verifier, client, options, v2.endpoints, v2.calls);
  },
  withSubMerchants: withAddedSubMerchants,
};
