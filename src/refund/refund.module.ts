import { Module } from '@nestjs/common';
import { ConfigModule, ConfigType } from '@nestjs/config';
import { AnomalyModule } from '../anomaly/anomaly.module';
import { alipayConfig } from '../channels/alipay/alipay.config';
import { refundConfig } from '../config/refund.config';
import { wechatpayConfig } from '../channels/wechatpay/wechatpay.config';
import { EventsModule } from '../events/events.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { OrderModule } from '../order/order.module';
import { AlipayVerifier } from '../channels/alipay/alipay.verifier';
import { loadPrivateKey } from '../channels/key-loading';
import { SignatureModule } from '../signature/signature.module';
import { WechatpayVerifier } from '../channels/wechatpay/wechatpay.verifier';
import { AlipayRefundClient } from '../channels/alipay/alipay.client';
import { REFUND_CHANNELS } from '../channels/payment-channel';
import { WechatpayRefundClient } from '../channels/wechatpay/wechatpay.client';
import { EmergencyRefundService } from './emergency-refund.service';
import { RefundExecutor } from './refund-executor';
import { RefundRepository } from './refund.repository';
import { RefundRetryWorker } from './refund-retry.worker';
import { RefundSettlement } from './refund-settlement';

@Module({
  imports: [
    ConfigModule.forFeature(refundConfig),
    ConfigModule.forFeature(wechatpayConfig),
    ConfigModule.forFeature(alipayConfig),
    SignatureModule,
    IdempotencyModule,
    OrderModule,
    AnomalyModule,
    EventsModule,
  ],
  providers: [
    {
      provide: REFUND_CHANNELS,
      inject: [refundConfig.KEY, wechatpayConfig.KEY, alipayConfig.KEY, WechatpayVerifier, AlipayVerifier],
      useFactory: (
        refund: ConfigType<typeof refundConfig>,
        wechatpay: ConfigType<typeof wechatpayConfig>,
        alipay: ConfigType<typeof alipayConfig>,
        wechatpayVerifier: WechatpayVerifier,
        alipayVerifier: AlipayVerifier,
      ) => {
        const { merchantPrivateKeyPath } = refund.wechatpay;
        const { appPrivateKeyPath } = refund.alipay;
        return [
          new WechatpayRefundClient(
            wechatpay.settings,
            refund,
            merchantPrivateKeyPath
              ? loadPrivateKey(merchantPrivateKeyPath, 'WECHATPAY_MERCHANT_PRIVATE_KEY_PATH')
              : undefined,
            wechatpayVerifier,
          ),
          new AlipayRefundClient(
            alipay.settings,
            refund,
            appPrivateKeyPath ? loadPrivateKey(appPrivateKeyPath, 'ALIPAY_APP_PRIVATE_KEY_PATH') : undefined,
            alipayVerifier,
          ),
        ];
      },
    },
    RefundRepository,
    RefundSettlement,
    RefundExecutor,
    RefundRetryWorker,
    EmergencyRefundService,
  ],
  exports: [RefundRepository, RefundSettlement, RefundExecutor, EmergencyRefundService],
})
export class RefundModule {}
