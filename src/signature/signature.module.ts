import { Logger, Module } from '@nestjs/common';
import { ConfigModule, ConfigType } from '@nestjs/config';
import { alipayConfig } from '../config/alipay.config';
import { wechatpayConfig } from '../config/wechatpay.config';
import { AlipayVerifier } from './alipay.verifier';
import { NotificationGuard } from './notification.guard';
import { Channel, CLOCK, Clock, NOTIFICATION_VERIFIERS } from './verified-notification';
import { WechatpayVerifier } from './wechatpay.verifier';

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
      provide: NOTIFICATION_VERIFIERS,
      inject: [wechatpayConfig.KEY, alipayConfig.KEY, CLOCK],
      useFactory: (
        wechatpay: ConfigType<typeof wechatpayConfig>,
        alipay: ConfigType<typeof alipayConfig>,
        clock: Clock,
      ) => {
        const verifiers = [new WechatpayVerifier(wechatpay.settings, clock), new AlipayVerifier(alipay.settings)];
        for (const v of verifiers.filter((v) => !v.enabled)) {
          new Logger('SignatureModule').warn(`${v.channel} notifications are disabled: ${DISABLED_HINT[v.channel]}`);
        }
        return verifiers;
      },
    },
    NotificationGuard,
  ],
  exports: [NOTIFICATION_VERIFIERS, NotificationGuard],
})
export class SignatureModule {}
