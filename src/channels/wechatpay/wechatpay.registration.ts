import { ConfigType } from '@nestjs/config';
import { refundConfig } from '../../config/refund.config';
import { Clock, CLOCK } from '../../domain/notification';
import { WechatpayChannel } from './wechatpay.channel';
import { WechatpayClient } from './wechatpay.client';
import { wechatpayConfig } from './wechatpay.config';
import { WechatpayVerifier } from './wechatpay.verifier';

/** How ChannelsModule builds the WeChat Pay adapter: its configuration and its provider. */
export const wechatpayChannel = {
  config: wechatpayConfig,
  provider: {
    provide: WechatpayChannel,
    inject: [wechatpayConfig.KEY, refundConfig.KEY, CLOCK],
    useFactory: (
      { accounts }: ConfigType<typeof wechatpayConfig>,
      api: ConfigType<typeof refundConfig>,
      clock: Clock,
    ): WechatpayChannel => {
      const verifier = new WechatpayVerifier(accounts, clock);
      const client = new WechatpayClient(
        accounts,
        {
          baseUrl: api.wechatpay.apiBaseUrl,
          timeoutMs: api.requestTimeoutMs,
          downloadTimeoutMs: api.billDownloadTimeoutMs,
        },
        verifier,
      );
      return new WechatpayChannel(accounts, verifier, client, { refundNotifyUrl: api.wechatpay.notifyUrl });
    },
  },
};
