/**
 * The UnionPay part of the simulator's local key set (`simulate init`), in `<keys>/unionpay/`: the test root and
 * middle certificates and the merchant's PFX go to the service; UnionPay's signing key and certificate stay with
 * the simulator, which signs notifications and the fake gateway's answers with them. Never for production.
 */
import { createPrivateKey, KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_SERVICE_PORT, formatMinor } from '../cli';
import type { ChannelPlatform, ToldTrade } from '../channel-simulator';
import { FakeUnionpayGateway, RecordedUnionpayRefund } from './fake-unionpay-gateway';
import { generateUnionpayKeySet } from './unionpay-keys';
import { newQueryId, signUnionpay, unionpayConsumeFields, unionpayForm, unionpayRefundFields } from './unionpay-signer';

/** The simulator's merchant: a 15-character merId in the style of UnionPay's test merchants. */
export const SIMULATED_MER_ID = '777290058110097';
/** UnionPay's test gateway on the simulator: the platform server's port plus this. */
export const GATEWAY_PORT_OFFSET = 1;

const FILES = {
  root: 'root.cer',
  middle: 'middle.cer',
  pfx: 'merchant.pfx',
  merchantCert: 'merchant-cert.pem',
  signerKey: 'unionpay-signer-key.pem',
  signerCert: 'unionpay-signer-cert.pem',
  description: 'unionpay.json',
} as const;

export interface UnionpayDevKeys {
  dir: string;
  merId: string;
  pfxPassword: string;
}

/** Generates the UnionPay key set into `<keysDir>/unionpay/`; files readable by the owner only. */
export function createUnionpayDevKeys(keysDir: string): UnionpayDevKeys {
  const dir = join(keysDir, 'unionpay');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const set = generateUnionpayKeySet();
  const write = (name: string, data: string | Buffer) => writeFileSync(join(dir, name), data, { mode: 0o600 });
  write(FILES.root, set.root.pem);
  write(FILES.middle, set.middle.pem);
  write(FILES.pfx, set.pfx);
  write(FILES.merchantCert, set.merchant.pem);
  write(FILES.signerKey, set.unionpaySigner.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  write(FILES.signerCert, set.unionpaySigner.pem);
  const keys = { dir, merId: SIMULATED_MER_ID, pfxPassword: set.pfxPassword };
  write(FILES.description, `${JSON.stringify({ merId: keys.merId, pfxPassword: keys.pfxPassword }, null, 2)}\n`);
  return keys;
}

/** The key set of `<keysDir>/unionpay/`, or undefined for a key set made before UnionPay was simulated. */
export function loadUnionpayDevKeys(keysDir: string): UnionpayDevKeys | undefined {
  const dir = join(keysDir, 'unionpay');
  if (!existsSync(join(dir, FILES.description))) return undefined;
  const description = JSON.parse(readFileSync(join(dir, FILES.description), 'utf8')) as Omit<UnionpayDevKeys, 'dir'>;
  return { ...description, dir };
}

/** UnionPay's signing key and certificate, as the simulator signs with them. */
export function unionpaySigner(keys: UnionpayDevKeys): { pem: string; privateKey: KeyObject } {
  return {
    pem: readFileSync(join(keys.dir, FILES.signerCert), 'utf8'),
    privateKey: createPrivateKey(readFileSync(join(keys.dir, FILES.signerKey))),
  };
}

export function merchantCertificatePem(keys: UnionpayDevKeys): string {
  return readFileSync(join(keys.dir, FILES.merchantCert), 'utf8');
}

/** The service's UnionPay variables; its gateway is the simulator's, on the platform port + 1. */
export function unionpayServiceEnvironment(
  keysDir: string,
  platformPort: number,
  servicePort = DEFAULT_SERVICE_PORT,
): Record<string, string> {
  const keys = loadUnionpayDevKeys(keysDir);
  if (!keys) return {};
  const gateway = `http://127.0.0.1:${platformPort + GATEWAY_PORT_OFFSET}`;
  return {
    UNIONPAY_MER_ID: keys.merId,
    UNIONPAY_ROOT_CERT_PATH: join(keys.dir, FILES.root),
    UNIONPAY_MIDDLE_CERT_PATH: join(keys.dir, FILES.middle),
    UNIONPAY_SIGN_CERT_PATH: join(keys.dir, FILES.pfx),
    UNIONPAY_SIGN_CERT_PASSWORD: keys.pfxPassword,
    UNIONPAY_GATEWAY_URL: gateway,
    UNIONPAY_FILE_TRANSFER_URL: `${gateway}/unionpay/fileTransfer`,
    // Sent with refunds; the fake gateway posts nothing there: `simulate refund-notice` delivers the result.
    UNIONPAY_BACK_URL: `http://127.0.0.1:${servicePort}/notify/unionpay`,
  };
}

/** A signed consumption notification (txnType 01) for `simulate pay --channel unionpay`; respCode 00 pays. */
export function unionpayPaymentForm(
  keysDir: string,
  p: { orderNo: string; transactionId: string; amount: number; respCode: string; txnTime?: string },
): string {
  const keys = loadUnionpayDevKeys(keysDir);
  if (!keys) throw new Error('this key set has no UnionPay part: run `npm run simulate -- init --force`');
  const fields = unionpayConsumeFields({
    merId: keys.merId,
    orderId: p.orderNo,
    queryId: p.transactionId,
    txnAmt: p.amount,
    respCode: p.respCode,
    ...(p.txnTime ? { txnTime: p.txnTime } : {}),
  });
  return unionpayForm(signUnionpay(fields, unionpaySigner(keys)));
}

export { newQueryId };

/** A signed refund result notification (txnType 04) for `simulate refund-notice --channel unionpay`. */
export function unionpayRefundForm(
  keysDir: string,
  p: { refundNo: string; transactionId: string; channelRefundId: string; amount: number; respCode: string },
): string {
  const keys = loadUnionpayDevKeys(keysDir);
  if (!keys) throw new Error('this key set has no UnionPay part: run `npm run simulate -- init --force`');
  const fields = unionpayRefundFields({
    merId: keys.merId,
    orderId: p.refundNo,
    origQryId: p.transactionId,
    queryId: p.channelRefundId,
    txnAmt: p.amount,
    respCode: p.respCode,
  });
  return unionpayForm(signUnionpay(fields, unionpaySigner(keys)));
}

/** The fake UnionPay gateway of `simulate platform`, on the platform port + 1; undefined without a UnionPay key set. */
export async function startUnionpayGateway(
  keysDir: string,
  platformPort: number,
): Promise<SimulatedUnionpayGateway | undefined> {
  const keys = loadUnionpayDevKeys(keysDir);
  if (!keys) return undefined;
  const gateway = await FakeUnionpayGateway.start({
    merchants: [{ merId: keys.merId, certificatePem: merchantCertificatePem(keys) }],
    signer: unionpaySigner(keys),
    port: platformPort + GATEWAY_PORT_OFFSET,
  });
  return new SimulatedUnionpayGateway(gateway, keys.merId);
}

/** The gateway as the platform command's /simulator/ endpoints use it. */
export class SimulatedUnionpayGateway implements ChannelPlatform {
  private logged = 0;

  constructor(
    private readonly gateway: FakeUnionpayGateway,
    private readonly merId: string,
  ) {}

  get url(): string {
    return this.gateway.url;
  }

  get description(): string {
    return `UnionPay gateway ${this.url}`;
  }

  /** A payment `simulate pay` made: queryTrans of its order, under the payment's txnTime, answers it paid. */
  recordTrade(trade: ToldTrade): boolean {
    if (typeof trade.orderNo !== 'string' || typeof trade.transactionId !== 'string') return false;
    if (!Number.isSafeInteger(trade.amount)) return false;
    this.gateway.putTrade({
      merId: this.merId,
      orderId: trade.orderNo,
      queryId: trade.transactionId,
      amount: trade.amount as number,
      ...(typeof trade.txnTime === 'string' ? { txnTime: trade.txnTime } : {}),
    });
    return true;
  }

  /** The consumption the service sent (appTransReq) or its buyer brought (frontTransReq) for the order, to pay. */
  describeCreated(orderNo: string): object | undefined {
    const consumption = this.gateway.consumptions.get(`${this.merId} ${orderNo}`);
    if (!consumption) return undefined;
    return {
      orderNo,
      amount: consumption.txnAmt,
      merchantId: consumption.merId,
      tradeType: consumption.endpoint,
      notifyUrl: consumption.backUrl,
      txnTime: consumption.txnTime,
    };
  }

  /** The refunds the service asked for here, oldest first. */
  get refunds(): readonly RecordedUnionpayRefund[] {
    return this.gateway.refunds;
  }

  /** The refunds asked for since the last call, a line each, as the platform command prints them. */
  newLogLines(): string[] {
    const fresh = this.gateway.refunds.slice(this.logged);
    this.logged = this.gateway.refunds.length;
    return fresh.map(
      (refund) =>
        `refund ${refund.orderId}  UNIONPAY ${refund.origQryId}  ${formatMinor(refund.txnAmt)}  → respCode ${refund.respCode}`,
    );
  }

  /** What `simulate refund-notice` needs of a refund the service asked for here. */
  describeRefund(refundNo: string): object | undefined {
    const refund = this.gateway.refunds.filter((r) => r.orderId === refundNo).pop();
    if (!refund) return undefined;
    const trade = this.gateway.tradeOf(refund.merId, refund.origQryId);
    return {
      channel: 'unionpay',
      refundNo,
      transactionId: refund.origQryId,
      amount: refund.txnAmt,
      orderNo: trade?.orderId,
      total: trade?.amount,
      channelRefundId: refund.queryId,
    };
  }

  close(): Promise<void> {
    return this.gateway.close();
  }
}
