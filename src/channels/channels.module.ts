import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { refundConfig } from '../config/refund.config';
import { CLOCK } from '../domain/notification';
import { alipayChannel } from './alipay/alipay.registration';
import { PAYMENT_CHANNELS } from './payment-channel';
import { PaymentChannels } from './payment-channels';
import { wechatpayChannel } from './wechatpay/wechatpay.registration';

/** Every payment channel the service speaks: adding one is a folder of its own and a line here. */
const CHANNELS = [wechatpayChannel, alipayChannel];

@Module({
  imports: [ConfigModule.forFeature(refundConfig), ...CHANNELS.map((c) => ConfigModule.forFeature(c.config))],
  providers: [
    { provide: CLOCK, useValue: Date.now },
    ...CHANNELS.map((c) => c.provider),
    { provide: PAYMENT_CHANNELS, inject: CHANNELS.map((c) => c.provider.provide), useFactory: (...all) => all },
    PaymentChannels,
  ],
  exports: [PaymentChannels],
})
export class ChannelsModule {}
