import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { loadRefundConfig } from '../../config/refund.config';
import { AlipayVerifier } from '../../signature/alipay.verifier';
import { Refund } from '../refund.entity';
import { AlipayRefundClient } from './alipay-refund.client';

it('probe', async () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const dir = mkdtempSync(path.join(tmpdir(), 'probe-'));
  writeFileSync(path.join(dir, 'k.pem'), publicKey.export({ type: 'spki', format: 'pem' }).toString());
  const verifier = new AlipayVerifier({ appId: '2021004100000001', publicKeyPath: path.join(dir, 'k.pem') });
  const client = new AlipayRefundClient({ appId: '2021004100000001', publicKeyPath: 'x' }, loadRefundConfig({}), privateKey, verifier);
  jest.spyOn(globalThis, 'fetch').mockResolvedValue(new Response('null', { status: 200 }));
  const refund = { transactionId: 't', refundNo: 'r', amount: 100, reason: 'x' } as Refund;
  let outcome: unknown;
  try { outcome = await client.refund(refund); } catch (e) { outcome = `THREW ${e}`; }
  console.log('refund:', outcome);
  try { outcome = await client.query(refund); } catch (e) { outcome = `THREW ${e}`; }
  console.log('query:', outcome);
});
