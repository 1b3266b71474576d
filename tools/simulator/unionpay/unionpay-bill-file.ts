/**
 * UnionPay's daily reconciliation files as fileTransfer serves them: the ZM file's fixed-width lines
 * (widths of 《全渠道平台接入接口规范 第3部分 文件接口》 6.1, as the acp SDK demo's parseZMFile reads
 * them), in a ZIP, DEFLATEd (zlib) and base64-encoded into fileContent.
 */
import { crc32, deflateRawSync, deflateSync } from 'node:zlib';

const ZM_WIDTHS = [
  3, 11, 11, 6, 10, 19, 12, 4, 2, 21, 2, 32, 2, 6, 10, 13, 13, 4, 15, 2, 2, 6, 2, 4, 32, 1, 21, 15, 1, 15, 32, 13, 13,
  8, 32, 13, 13, 12, 2, 1, 32, 98,
];
const BEIJING_OFFSET_MS = 8 * 3600 * 1000;

export interface ZmTrade {
  /** 01 a consumption, 04 a refund. */
  txnType: '01' | '04';
  /** Fen. */
  amount: number;
  queryId: string;
  /** The consumption's orderId, or the refund's own (our refund number). */
  orderId: string;
  at: Date;
  /** Refunds: the refunded payment's queryId and orderId. */
  origQueryId?: string;
  origOrderId?: string;
}

/** One ZM line: every field padded to its width, one space after each. */
export function zmLine(t: ZmTrade, merId: string): string {
  const beijing = new Date(t.at.getTime() + BEIJING_OFFSET_MS).toISOString();
  const transmitted = beijing.slice(5, 19).replace(/\D/g, ''); // MMDDhhmmss
  const values: Record<number, string> = {
    0: t.txnType === '01' ? 'S22' : 'S30',
    4: transmitted,
    5: '6216261000000000018',
    6: String(t.amount).padStart(12, '0'),
    9: t.queryId,
    11: t.orderId,
    19: t.txnType,
    20: '00',
    21: '000201',
    26: t.origQueryId ?? '',
    27: merId,
    40: t.origOrderId ?? '',
  };
  return ZM_WIDTHS.map((width, i) => (values[i] ?? '').padEnd(width, ' ').slice(0, width)).join(' ');
}

/** The ZIP of a day (INN<yyMMdd>88ZM_<merId>), or any lines given as they are. */
export function unionpayBillZip(lines: string[], date: string, merId: string): Buffer {
  const name = `INN${date.slice(2, 4)}${date.slice(5, 7)}${date.slice(8, 10)}88ZM_${merId}`;
  return storedZip([{ name, data: Buffer.from(lines.map((l) => `${l}\r\n`).join(''), 'latin1') }]);
}

/** fileContent: base64 of the zlib DEFLATE of the ZIP. */
export function fileContentOf(zip: Buffer): string {
  return deflateSync(zip).toString('base64');
}

function storedZip(files: Array<{ name: string; data: Buffer }>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const file of files) {
    const name = Buffer.from(file.name, 'utf8');
    const compressed = deflateRawSync(file.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0, 6);
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt32LE(0x5b7e0000, 10);
    local.writeUInt32LE(crc32(file.data), 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(file.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    local.copy(central, 8, 6, 26);
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
