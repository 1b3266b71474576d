import { Channel } from '../../domain/notification';
import { ChannelRegistration } from '../channel-registration';
import { wechatpayAccounts } from './wechatpay.accounts';
import { WechatpayChannel } from './wechatpay.channel';
import { WechatpayClient } from './wechatpay.client';
import { loadWechatpayOptions, WechatpayOptions } from './wechatpay.config';
import { WechatpayVerifier } from './wechatpay.verifier';
import { WechatpayV2Endpoint } from './v2/wechatpay-v2.endpoint';
import { WechatpayV2Verifier } from './v2/wechatpay-v2.verifier';

/** WeChat Pay (APIv3, and APIv2's XML notifications for accounts with an APIv2 key), as the registration list knows it. */
export const wechatpayChannel: ChannelRegistration<WechatpayOptions> = {
  channel: Channel.Wechatpay,
  loadOptions: loadWechatpayOptions,
  accounts: wechatpayAccounts,
  create({ accounts, api }, calls, clock) {
    const verifier = new WechatpayVerifier(accounts, clock);
    const client = new WechatpayClient(
      accounts,
      { baseUrl: api.baseUrl, timeoutMs: calls.requestTimeoutMs, downloadTimeoutMs: calls.billDownloadTimeoutMs },
      verifier,
    );
    const v2 = new WechatpayV2Verifier(accounts);
    // Without any APIv2 key, POST /notify/wechatpay-v2 does not exist (404).
    const otherNotifyEndpoints = v2.enabled ? [new WechatpayV2Endpoint(v2)] : [];
    return new WechatpayChannel(
      accounts,
      verifier,
      client,
      { refundNotifyUrl: api.refundNotifyUrl },
      otherNotifyEndpoints,
    );
  },
};
