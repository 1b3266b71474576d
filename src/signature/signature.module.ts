import { Logger, Module } from '@nestjs/common';
import { ConfigModule, ConfigType } from '@nestjs/config';
import { alipayConfig } from '../channels/alipay/alipay.config';
import { wechatpayConfig } from '../channels/wechatpay/wechatpay.config';
import { AlipayVerifier } from '../channels/alipay/alipay.verifier';
import { NotificationGuard } from './notification.guard';
import { Channel, CLOCK, Clock, NOTIFICATION_VERIFIERS } from '../domain/notification';
import { WechatpayVerifier } from '../channels/wechatpay/wechatpay.verifier';

const DISABLED_HINT: Record<Channel, string> = {
  [Channel.Wechatpay]:
    'set WECHATPAY_MCHID, WECHATPAY_APIV3_KEY and WECHATPAY_PUBLIC_KEY_ID + WECHATPAY_PUBLIC_KEY_PATH or WECHATPAY_PLATFORM_CERT_PATHS to enable',
  [Channel.Alipay]: 'set ALIPAY_APP_ID and ALIPAY_PUBLIC_KEY_PATH to enable',
};

@Module({
  imports: [ConfigModule.forFeature(wechatpayConfig), ConfigModule.forFeature(alipayConfig)],
  providers: [
    { provide: CLOCK, useValue: Date.now },
    {
      provide: WechatpayVerifier,
      inject: [wechatpayConfig.KEY, CLOCK],
      useFactory: (config: ConfigType<typeof wechatpayConfig>, clock: Clock) =>
        new WechatpayVerifier(config.settings, clock),
    },
    {
      provide: AlipayVerifier,
      inject: [alipayConfig.KEY],
      useFactory: (config: ConfigType<typeof alipayConfig>) => new AlipayVerifier(config.settings),
    },
    {
      provide: NOTIFICATION_VERIFIERS,
      inject: [WechatpayVerifier, AlipayVerifier],
      useFactory: (wechatpay: WechatpayVerifier, alipay: AlipayVerifier) => {
        const verifiers = [wechatpay, alipay];
        for (const v of verifiers.filter((v) => !v.enabled)) {
          new Logger('SignatureModule').warn(`${v.channel} notifications are disabled: ${DISABLED_HINT[v.channel]}`);
        }
        return verifiers;
      },
    },
    NotificationGuard,
  ],
  exports: [NOTIFICATION_VERIFIERS, NotificationGuard, WechatpayVerifier, AlipayVerifier],
})
export class SignatureModule {}
