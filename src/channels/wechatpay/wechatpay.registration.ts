import { Channel } from '../../domain/notification';
import { ChannelRegistration } from '../channel-registration';
import { wechatpayAccounts } from './wechatpay.accounts';
import { WechatpayChannel } from './wechatpay.channel';
import { WechatpayClient } from './wechatpay.client';
import { loadWechatpayOptions, WechatpayOptions } from './wechatpay.config';
import { WechatpayVerifier } from './wechatpay.verifier';

/** WeChat Pay APIv3, as the registration list knows it. */
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
    return new WechatpayChannel(accounts, verifier, client, { refundNotifyUrl: api.refundNotifyUrl });
  },
};
