import { crc32, deflateRawSync } from 'node:zlib';
import iconv from 'iconv-lite';

/** Bills in the channels' real formats, built from plain rows: what the fake platform serves. */

export interface BillRowSpec {
  kind: 'PAYMENT' | 'REFUND';
  transactionId: string;
  orderNo: string;
  /** Integer minor units. */
  amount: number;
  refundNo?: string;
  /** Beijing time, "2026-11-30 12:00:00". */
  at: string;
}

const BEIJING_OFFSET_MS = 8 * 3600 * 1000;

export function beijingTime(at: Date): string {
  return new Date(at.getTime() + BEIJING_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ');
}

function yuan(minor: number): string {
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

const WECHAT_HEADER =
  '交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,' +
  '应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,' +
  '手续费,费率,订单金额,申请退款金额,费率备注';

export function wechatpayBillLine(row: BillRowSpec, mchid: string): string {
  const paid = row.kind === 'PAYMENT';
  const fields = [
    row.at,
    'wxd678efh567hg6787',
    mchid,
    '0',
    '',
    row.transactionId,
    row.orderNo,
    'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o',
    'JSAPI',
    paid ? 'SUCCESS' : 'REFUND',
    'CMB_DEBIT',
    'CNY',
    paid ? yuan(row.amount) : '0.00',
    '0.00',
    paid ? '0' : `5030${row.transactionId.slice(-16)}`,
    paid ? '0' : (row.refundNo ?? ''),
    paid ? '0.00' : yuan(row.amount),
    '0.00',
    paid ? '' : 'ORIGINAL',
    paid ? '' : 'SUCCESS',
    '商品',
    '',
    '0.00000',
    '0.60%',
    paid ? yuan(row.amount) : '0.00',
    paid ? '0.00' : yuan(row.amount),
    '',
  ];
  return fields.map((f) => `\`${f}`).join(',');
}

/** WeChat Pay's tradebill (bill_type=ALL): backtick fields, the summary at the end; `extraLines` go in as they are. */
export function wechatpayBill(rows: BillRowSpec[], mchid: string, extraLines: string[] = []): string {
  const lines = rows.map((r) => wechatpayBillLine(r, mchid));
  const paid = rows.filter((r) => r.kind === 'PAYMENT').reduce((sum, r) => sum + r.amount, 0);
  const refunded = rows.filter((r) => r.kind === 'REFUND').reduce((sum, r) => sum + r.amount, 0);
  return [
    WECHAT_HEADER,
    ...lines,
    ...extraLines,
    '总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额',
    [lines.length + extraLines.length, yuan(paid), yuan(refunded), '0.00', '0.00000', yuan(paid), yuan(refunded)]
      .map((f) => `\`${f}`)
      .join(','),
    '',
  ].join('\r\n');
}

const ALIPAY_HEADER =
  '支付宝交易号,商户订单号,业务类型,商品名称,创建时间,完成时间,门店编号,门店名称,操作员,终端号,对方账户,订单金额（元）,' +
  '商家实收（元）,支付宝红包（元）,集分宝（元）,支付宝优惠（元）,商家优惠（元）,券核销金额（元）,券名称,商家红包消费金额（元）,' +
  '卡消费金额（元）,退款批次号/请求号,服务费（元）,分润（元）,备注';

export function alipayBillLine(row: BillRowSpec): string {
  const amount = yuan(row.kind === 'PAYMENT' ? row.amount : -row.amount);
  const fields = [
    row.transactionId,
    row.orderNo,
    row.kind === 'PAYMENT' ? '交易' : '退款',
    '商品',
    row.at,
    row.at,
    '',
    '',
    '',
    '',
    'zha***@163.com',
    amount,
    amount,
    '0.00',
    '0.00',
    '0.00',
    '0.00',
    '0.00',
    '',
    '0.00',
    '0.00',
    row.refundNo ?? '',
    '0.00',
    '0.00',
    '',
  ];
  return fields.map((f) => `${f}\t`).join(',');
}

/** The 业务明细 CSV of Alipay's trade bill, GBK-encoded, with its comment lines. */
export function alipayBillDetail(rows: BillRowSpec[], date: string, extraLines: string[] = []): Buffer {
  const text = [
    '#支付宝业务明细查询',
    '#账号：[20885318916687390156]',
    `#起始日期：[${date} 00:00:00]   终止日期：[${date} 23:59:59]`,
    '#-----------------------------------------业务明细列表----------------------------------------',
    ALIPAY_HEADER,
    ...rows.map(alipayBillLine),
    ...extraLines,
    '#-----------------------------------------业务明细列表结束------------------------------------',
    `#交易合计：${rows.filter((r) => r.kind === 'PAYMENT').length}笔`,
    `#退款合计：${rows.filter((r) => r.kind === 'REFUND').length}笔`,
    '',
  ].join('\r\n');
  return iconv.encode(text, 'gbk');
}

/** Alipay's bill ZIP: the detail and the summary file, names in GBK without the UTF-8 flag, as Alipay writes them. */
export function alipayBillZip(detail: Buffer, date: string, account = '20885318916687390156'): Buffer {
  const day = date.replace(/-/g, '');
  return gbkZip([
    { name: `${account}_${day}_业务明细.csv`, data: detail },
    { name: `${account}_${day}_业务明细(汇总).csv`, data: iconv.encode('#支付宝业务汇总查询\r\n', 'gbk') },
  ]);
}

/** A deflated ZIP whose file names are GBK bytes with general-purpose bit 11 clear (no UTF-8 flag). */
export function gbkZip(files: Array<{ name: string; data: Buffer }>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const file of files) {
    const name = iconv.encode(file.name, 'gbk');
    const compressed = deflateRawSync(file.data);
    const crc = crc32(file.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0, 6); // flags: names are not UTF-8
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt32LE(0x5b7e0000, 10); // DOS time and date
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(file.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    local.copy(central, 8, 6, 26); // flags, method, time, date, crc, sizes
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, compressed);
    centrals.push(central, name);
    offset += local.length + name.length + compressed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
