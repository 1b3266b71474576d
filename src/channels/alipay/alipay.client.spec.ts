import { generateKeyPairSync, KeyObject, sign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AlipayVerifier } from './alipay.verifier';
import { signedResponse } from './alipay.client';

const APP_ID = '2021004100000001';
const SIGN = 'ERITJKEIJKJHKKKKKKKHJEREEEEEEEEEEE+/abc=';
/** A success answer as Alipay writes it: unescaped Chinese, "/" escaped, nested fund_bill_detail objects. */
const SUCCESS =
  '{"code":"10000","msg":"Success","buyer_logon_id":"159****5620","buyer_user_id":"2088101117955611",' +
  '"fund_change":"Y","gmt_refund_pay":"2025-03-01 20:00:00","out_trade_no":"ORD20250301120000001",' +
  '"refund_fee":"88.88","send_back_fee":"88.88","trade_no":"2025030122001468451400000001",' +
  '"refund_detail_item_list":[{"fund_channel":"ALIPAYACCOUNT","amount":"88.88","real_amount":"88.88"}],' +
  '"store_name":"望湘园联洋店","memo":"退款说明 \\"原路退回\\" {不含运费} \\\\ end\\/"}';
const ERROR = '{"code":"40002","msg":"Invalid Arguments","sub_code":"isv.invalid-signature","sub_msg":"验签出错"}';

describe(signedResponse.name, () => {
  const sut = signedResponse;

  it('should return undefined for a body that is JSON null', () => {
    expect(signedResponse('null')).toBeUndefined();
  });

  it.each(['null', '[{"code":"10000"}]'])('should return undefined when the response object is %s', (value) => {
    expect(signedResponse(`{"alipay_trade_refund_response":${value},"sign":"x"}`)).toBeUndefined();
  });

  it('should cut out the exact text of alipay_trade_refund_response and the sign', () => {
    const text = `{"alipay_trade_refund_response":${SUCCESS},"sign":"${SIGN}"}`;

    expect(sut(text)).toEqual({ content: SUCCESS, sign: SIGN });
  });

  it('should keep the text exactly as written, not as JSON.stringify would write it again', () => {
    const text = `{"alipay_trade_refund_response":${SUCCESS},"sign":"${SIGN}"}`;

    const result = sut(text);

    expect(result?.content).toContain('\\/');
    expect(result?.content).not.toBe(JSON.stringify(JSON.parse(SUCCESS)));
  });

  it('should cut out error_response when the gateway refuses the request', () => {
    const text = `{"error_response":${ERROR},"sign":"${SIGN}"}`;

    expect(sut(text)).toEqual({ content: ERROR, sign: SIGN });
  });

  it('should prefer alipay_trade_refund_response when both objects are present', () => {
    const text = `{"error_response":${ERROR},"alipay_trade_refund_response":${SUCCESS},"sign":"${SIGN}"}`;

    expect(sut(text)).toEqual({ content: SUCCESS, sign: SIGN });
  });

  it('should find the response after sign and alipay_cert_sn', () => {
    const text = `{"sign":"${SIGN}","alipay_cert_sn":"4cee3a7d4b9c6e1d","alipay_trade_refund_response":${SUCCESS}}`;

    expect(sut(text)).toEqual({ content: SUCCESS, sign: SIGN, certSn: '4cee3a7d4b9c6e1d' });
  });

  it('should allow whitespace and newlines between the tokens', () => {
    const content = '{ "code" : "10000",\n  "fund_change" : "N" ,\n  "nested" : { "a" : { } } }';
    const text = `{\n  "alipay_trade_refund_response" :\t${content} ,\n  "sign" : "${SIGN}"\n}\n`;

    expect(sut(text)).toEqual({ content, sign: SIGN });
  });

  it.each([
    ['a closing brace in a string', '{"msg":"}","code":"10000"}'],
    ['an opening brace in a string', '{"msg":"{{{","code":"10000"}'],
    ['an escaped quote before a brace', '{"msg":"say \\"}\\" now","code":"10000"}'],
    ['an escaped backslash closing a string', '{"msg":"C:\\\\","code":"10000","x":{"y":"}"}}'],
    ['a unicode escape', '{"msg":"\\u007d\\u0022","code":"10000"}'],
    ['deeply nested objects', '{"a":{"b":{"c":{"d":"}"}},"e":[{"f":{}}]},"code":"10000"}'],
    ['non-ASCII and astral characters', '{"sub_msg":"交易已经关闭 😀","code":"40004"}'],
  ])('should find the closing brace of a response with %s', (_what, content) => {
    const text = `{"alipay_trade_refund_response":${content},"sign":"${SIGN}","after":{"z":"}"}}`;

    expect(JSON.parse(content)).toBeInstanceOf(Object);
    expect(sut(text)).toEqual({ content, sign: SIGN });
  });

  it('should cut out the response of the method it is asked for', () => {
    const query = '{"code":"10000","msg":"Success","out_request_no":"ER1","refund_status":"REFUND_SUCCESS"}';
    const text = `{"alipay_trade_fastpay_refund_query_response":${query},"sign":"${SIGN}"}`;

    expect(sut(text, 'alipay_trade_fastpay_refund_query_response')).toEqual({ content: query, sign: SIGN });
    expect(sut(text)).toBeUndefined();
  });

  it.each([
    ['invalid JSON', `{"alipay_trade_refund_response":${SUCCESS},"sign":"${SIGN}"`],
    ['an HTML error page', '<html><body>502 Bad Gateway</body></html>'],
    ['an empty body', ''],
    ['no sign', `{"alipay_trade_refund_response":${SUCCESS}}`],
    ['a sign that is not a string', `{"alipay_trade_refund_response":${SUCCESS},"sign":42}`],
    ['no response object', `{"sign":"${SIGN}"}`],
    ['a response of another method', `{"alipay_trade_query_response":${SUCCESS},"sign":"${SIGN}"}`],
    ['a response that is a string', `{"alipay_trade_refund_response":"${'{}'}","sign":"${SIGN}"}`],
    ['a JSON array', `[{"alipay_trade_refund_response":${SUCCESS},"sign":"${SIGN}"}]`],
    ['a JSON string', '"alipay_trade_refund_response"'],
  ])('should return undefined for %s', (_what, text) => {
    expect(sut(text)).toBeUndefined();
  });
});

interface RsaKeyPair {
  privateKey: KeyObject;
  publicKeyPem: string;
}

function generateRsaKeyPair(): RsaKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

describe('signedResponse with AlipayVerifier.verifyResponse', () => {
  const sut = signedResponse;
  let dir: string;
  let alipay: RsaKeyPair;
  let stranger: RsaKeyPair;
  let verifier: AlipayVerifier;

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'alipay-refund-client-'));
    alipay = generateRsaKeyPair();
    stranger = generateRsaKeyPair();
    const publicKeyPath = path.join(dir, 'alipay-public-key.pem');
    writeFileSync(publicKeyPath, alipay.publicKeyPem);
    verifier = new AlipayVerifier([{ appId: APP_ID, publicKeyPath }]);
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** SHA256withRSA over the response object's text, as the gateway signs it. */
  const signed = (content: string, key = alipay) =>
    sign('sha256', Buffer.from(content, 'utf8'), key.privateKey).toString('base64');

  it.each([
    ['a success, response first', (s: string) => `{"alipay_trade_refund_response":${SUCCESS},"sign":"${s}"}`, SUCCESS],
    ['a success, sign first', (s: string) => `{"sign":"${s}",\n "alipay_trade_refund_response" : ${SUCCESS}}`, SUCCESS],
    ['an error_response', (s: string) => `{"error_response":${ERROR},"sign":"${s}"}`, ERROR],
  ])('should verify %s signed by Alipay', (_what, body, content) => {
    const result = sut(body(signed(content)));

    expect(result).toBeDefined();
    expect(verifier.verifyResponse(APP_ID, result!.content, result!.sign)).toBe(true);
  });

  it('should not verify the response with one character changed', () => {
    const sign = signed(SUCCESS);
    const tampered = SUCCESS.replace('"fund_change":"Y"', '"fund_change":"N"');
    expect(tampered).not.toBe(SUCCESS);
    expect(tampered).toHaveLength(SUCCESS.length);

    const original = sut(`{"alipay_trade_refund_response":${SUCCESS},"sign":"${sign}"}`);
    const result = sut(`{"alipay_trade_refund_response":${tampered},"sign":"${sign}"}`);

    expect(verifier.verifyResponse(APP_ID, original!.content, original!.sign)).toBe(true);
    expect(result?.content).toBe(tampered);
    expect(verifier.verifyResponse(APP_ID, result!.content, result!.sign)).toBe(false);
  });

  it('should not verify a response whose non-ASCII text was changed', () => {
    const sign = signed(SUCCESS);
    const tampered = SUCCESS.replace('望湘园', '望湘圆');
    expect(tampered).not.toBe(SUCCESS);

    const result = sut(`{"alipay_trade_refund_response":${tampered},"sign":"${sign}"}`);

    expect(verifier.verifyResponse(APP_ID, result!.content, result!.sign)).toBe(false);
  });

  it('should not verify a response re-serialized by JSON.stringify', () => {
    const sign = signed(SUCCESS);
    const reserialized = JSON.stringify(JSON.parse(SUCCESS));
    expect(reserialized).not.toBe(SUCCESS);

    expect(verifier.verifyResponse(APP_ID, SUCCESS, sign)).toBe(true);
    expect(verifier.verifyResponse(APP_ID, reserialized, sign)).toBe(false);
  });

  it('should not verify a response signed by another key', () => {
    const result = sut(`{"alipay_trade_refund_response":${SUCCESS},"sign":"${signed(SUCCESS, stranger)}"}`);

    expect(result?.content).toBe(SUCCESS);
    expect(verifier.verifyResponse(APP_ID, result!.content, result!.sign)).toBe(false);
  });
});
