import { Channel, RawDelivery, VerifiedNotification } from '../../../domain/notification';
import { NotifyEndpoint, PlatformReply } from '../../payment-channel';
import { WechatpayV2Verifier } from './wechatpay-v2.verifier';
import { writeV2Xml } from './wechatpay-v2.xml';

const XML_HEADERS = { 'content-type': 'text/xml; charset=utf-8' };

/** WeChat Pay APIv2's XML notifications, POST /notify/wechatpay-v2, answered in v2's XML. */
export class WechatpayV2Endpoint implements NotifyEndpoint {
  readonly channel = Channel.Wechatpay;
  readonly notifyPath = 'wechatpay-v2';
  readonly disabledHint =
    'set WECHATPAY_APIV2_KEY (or apiV2Key on a wechatpay entry of PAYMENT_ACCOUNTS_FILE) to enable';

  constructor(private readonly verifier: WechatpayV2Verifier) {}

  get enabled(): boolean {
    return this.verifier.enabled;
  }

  verify(delivery: RawDelivery): VerifiedNotification {
    return this.verifier.verify(delivery);
  }

  /** Anything but this exact SUCCESS makes WeChat deliver again. */
  successReply(): PlatformReply {
    return { status: 200, headers: XML_HEADERS, body: writeV2Xml({ return_code: 'SUCCESS', return_msg: 'OK' }) };
  }

  failureReply(status: number, message: string): PlatformReply {
    return { status, headers: XML_HEADERS, body: writeV2Xml({ return_code: 'FAIL', return_msg: message }) };
  }
}

const PAYER_FIELDS = /<(openid|sub_openid)>(<!\[CDATA\[)?[^<\]]*(\]\]>)?<\/\1>/g;

/** A v2 notification's bytes with the payer's openid masked (v2 sends it in the clear). */
export function maskV2Payer(rawBody: Buffer): Buffer {
  const text = rawBody.toString('utf8');
  if (!text.trimStart().startsWith('<')) return rawBody;
  return Buffer.from(
    text.replace(
      PAYER_FIELDS,
      (_m, name: string, open?: string, close?: string) => `<${name}>${open ?? ''}***${close ?? ''}</${name}>`,
    ),
    'utf8',
  );
}
