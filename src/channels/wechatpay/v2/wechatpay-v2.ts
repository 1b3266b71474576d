import { Clock } from '../../../domain/notification';
import { ChannelCallsConfig } from '../../channel-calls.config';
import { NotifyEndpoint } from '../../payment-channel';
import { WechatpayAccount, WechatpayApiOptions } from '../wechatpay.config';
import { WechatpayV2Calls } from './wechatpay-v2.calls';
import { WechatpayV2Client } from './wechatpay-v2.client';
import { WechatpayV2Endpoint } from './wechatpay-v2.endpoint';
import { WechatpayV2Verifier } from './wechatpay-v2.verifier';

/** APIv2's part of the WeChat Pay channel: its XML notification endpoint and the calls of APIv2-only accounts. */
export interface WechatpayV2 {
  /** Empty without any APIv2 key: POST /notify/wechatpay-v2 then does not exist (404). */
  endpoints: NotifyEndpoint[];
  calls: WechatpayV2Calls;
}

export function createWechatpayV2(
  accounts: WechatpayAccount[],
  api: WechatpayApiOptions,
  calls: ChannelCallsConfig,
  clock: Clock = Date.now,
): WechatpayV2 {
  const verifier = new WechatpayV2Verifier(accounts, clock);
  const client = new WechatpayV2Client(accounts, {
    baseUrl: api.baseUrl,
    timeoutMs: calls.requestTimeoutMs,
    downloadTimeoutMs: calls.billDownloadTimeoutMs,
    caPath: api.apiV2CaPath,
  });
  return {
    endpoints: verifier.enabled ? [new WechatpayV2Endpoint(verifier)] : [],
    calls: new WechatpayV2Calls(client, { refundNotifyUrl: api.refundNotifyUrl }),
  };
}
