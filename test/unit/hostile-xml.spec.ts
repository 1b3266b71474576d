import { DomainError } from '../../src/domain/domain-error';
import { WechatpayConfig } from '../../src/channels/wechatpay/wechatpay.config';
import { encryptReqInfo } from '../../src/channels/wechatpay/v2/wechatpay-v2.sign';
import { WechatpayV2Verifier } from '../../src/channels/wechatpay/v2/wechatpay-v2.verifier';
import { readV2Xml, writeV2Xml } from '../../src/channels/wechatpay/v2/wechatpay-v2.xml';
import { hostileXmlDocuments, OBJECT_PROPERTY_NAMES } from '../support/hostile-documents';

const MCHID = '1900009191';
const APPID = 'wxd678efh567hg6787';
const API_V2_KEY = 'Zt8mQ2vLx7Rk4Nw9Pb3Hs6Jd1Fg5Cy0A';
const account: WechatpayConfig = { mchid: MCHID, appids: [APPID], apiV2Key: API_V2_KEY, platformCertPaths: [] };

/** What a run ended with: the fields read, or the refusal's code and status; anything else is rethrown. */
function outcome(run: () => unknown): { code: string; status: number } | 'read' {
  try {
    run();
    return 'read';
  } catch (error) {
    if (error instanceof DomainError) return { code: error.code, status: error.status };
    throw error;
  }
}

const delivery = (xml: string) => ({ body: Buffer.from(xml, 'utf8'), headers: { 'content-type': 'text/xml' } });

/** A provider's refund notice whose decrypted req_info is the hostile document. */
function refundNoticeCarrying(record: string): string {
  return writeV2Xml({
    return_code: 'SUCCESS',
    appid: APPID,
    mch_id: MCHID,
    nonce_str: 'n',
    req_info: encryptReqInfo(record, API_V2_KEY),
  });
}

describe('hostile XML is read or refused with a 4xx, never a crash', () => {
  const documents = hostileXmlDocuments('xml').map((xml, i) => [i, xml.slice(0, 80), xml] as const);
  const records = hostileXmlDocuments('root', 60, 36).map((xml, i) => [i, xml.slice(0, 80), xml] as const);

  it.each(documents)('readV2Xml should read or refuse document %i (%s) as MalformedRequest', (_i, _start, xml) => {
    const result = outcome(() => readV2Xml(xml, 'xml', 'notification'));
    if (result !== 'read') expect(result).toEqual({ code: 'MalformedRequest', status: 400 });
  });

  it.each(documents)('the v2 verifier should refuse document %i (%s) with a 4xx', (_i, _start, xml) => {
    const sut = new WechatpayV2Verifier([account]);
    const result = outcome(() => sut.verify(delivery(xml)));
    expect(result).not.toBe('read');
    expect(result).toEqual({ code: expect.any(String), status: expect.any(Number) });
    if (result !== 'read') expect(result.status).toBeLessThan(500);
  });

  it.each(records)('the v2 verifier should refuse decrypted req_info %i (%s) with a 4xx', (_i, _start, record) => {
    const sut = new WechatpayV2Verifier([account]);
    const result = outcome(() => sut.verify(delivery(refundNoticeCarrying(record))));
    expect(result).not.toBe('read');
    if (result !== 'read') expect(result.status).toBeLessThan(500);
  });

  const inherited = OBJECT_PROPERTY_NAMES.filter((name) => name in Object.prototype || name === 'prototype');
  it.each(inherited.map((name) => [name]))(
    'should refuse a field named %s rather than read it under another name',
    (name) => {
      const result = outcome(() => readV2Xml(`<xml><${name}>x</${name}></xml>`, 'xml', 'notification'));
      expect(result).toEqual({ code: 'MalformedRequest', status: 400 });
    },
  );
});
