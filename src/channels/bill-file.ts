import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { BillEntry } from '../domain/bill';

/**
 * A downloaded bill is written to a temporary file first: its integrity is checked before a line
 * of it is believed, and then it is read at the pace of the comparison, never held in memory.
 */
export async function saveToTempFile(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<string> {
  const path = join(tmpdir(), `pcs-bill-${randomUUID()}`);
  let size = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      done(size > maxBytes ? new Error(`the bill is larger than ${maxBytes} bytes`) : null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(body as Parameters<typeof Readable.fromWeb>[0]), limit, createWriteStream(path));
  } catch (error) {
    await removeFile(path);
    throw error;
  }
  return path;
}

/** The file's bytes, gunzipped when it is gzip (a tar_type=GZIP bill), whatever was asked for. */
export async function openMaybeGzipped(path: string): Promise<Readable> {
  const head = await readHead(path, 2);
  const raw = createReadStream(path);
  return head[0] === 0x1f && head[1] === 0x8b ? raw.pipe(createGunzip()) : raw;
}

export async function sha1Hex(stream: Readable): Promise<string> {
  const hash = createHash('sha1');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Entries from `parse`, then the file is gone, however the reader stops. */
export async function* entriesThenRemove(
  path: string,
  parse: (path: string) => AsyncIterable<BillEntry>,
): AsyncGenerator<BillEntry> {
  try {
    yield* parse(path);
  } finally {
    await removeFile(path);
  }
}

export async function removeFile(path: string): Promise<void> {
  await rm(path, { force: true });
}

async function readHead(path: string, bytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of createReadStream(path, { start: 0, end: bytes - 1 })) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
