import { ConfigType } from '@nestjs/config';
import { refundConfig } from '../../config/refund.config';
import { AlipayChannel } from './alipay.channel';
import { AlipayClient } from './alipay.client';
import { alipayConfig } from './alipay.config';
import { Clock, CLOCK } from '../../domain/notification';
import { AlipayVerifier } from './alipay.verifier';

/** How ChannelsModule builds the Alipay adapter: its configuration and its provider. */
export const alipayChannel = {
  config: alipayConfig,
  provider: {
    provide: AlipayChannel,
    inject: [alipayConfig.KEY, refundConfig.KEY, CLOCK],
    useFactory: (
      { accounts, notifyMaxAgeSeconds }: ConfigType<typeof alipayConfig>,
      api: ConfigType<typeof refundConfig>,
      clock: Clock,
    ) => {
      const verifier = new AlipayVerifier(accounts, { notifyMaxAgeSeconds }, clock);
      const client = new AlipayClient(
        accounts,
        {
          gatewayUrl: api.alipay.gatewayUrl,
          timeoutMs: api.requestTimeoutMs,
          downloadTimeoutMs: api.billDownloadTimeoutMs,
        },
        verifier,
      );
      return new AlipayChannel(verifier, client);
    },
  },
};
