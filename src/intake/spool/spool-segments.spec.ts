import { mkdtempSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { frame } from './spool-record';
import { CorruptStretch, SpoolSegments } from './spool-segments';

describe(SpoolSegments.name, () => {
  let dir: string;
  let quarantined: CorruptStretch[];
  let warnings: string[];
  let sut: SpoolSegments | undefined;

  const open = async () => {
    sut = await SpoolSegments.open(
      dir,
      (stretch) => Promise.resolve(void quarantined.push(stretch)),
      (message) => void warnings.push(message),
    );
    return sut;
  };
  const record = (text: string) => frame(Buffer.from(JSON.stringify({ text })));
  const segmentFiles = () =>
    readdirSync(dir)
      .filter((name) => name.endsWith('.seg'))
      .map((name) => join(dir, name));

  /** Consumes everything there is, as the replayer does. */
  async function drain(segments: SpoolSegments): Promise<string[]> {
    const texts: string[] = [];
    for (let head = await segments.head(); head; head = await segments.head()) {
      texts.push((JSON.parse(head.payload.toString()) as { text: string }).text);
      await segments.commit(head.next);
    }
    return texts;
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pcs-segments-'));
    quarantined = [];
    warnings = [];
  });
  afterEach(async () => {
    await sut?.close();
    sut = undefined;
  });

  it('should give back the records in the order they were appended, concurrent appends included', async () => {
    const segments = await open();
    await Promise.all(['a', 'b', 'c', 'd'].map((text) => segments.append(record(text))));
    expect(await drain(segments)).toEqual(['a', 'b', 'c', 'd']);
    expect(quarantined).toEqual([]);
  });

  it('should resume from the checkpoint after a restart, and count what is left', async () => {
    let segments = await open();
    for (const text of ['a', 'b', 'c']) await segments.append(record(text));
    const head = (await segments.head())!;
    await segments.commit(head.next);
    await segments.close();

    segments = await open();
    expect(await segments.countRecords()).toBe(2);
    expect(await drain(segments)).toEqual(['b', 'c']);
  });

  it('should delete consumed segments and free their bytes', async () => {
    let segments = await open();
    await segments.append(record('a'));
    await segments.close();
    segments = await open();
    await segments.append(record('b'));
    expect(segments.bytes).toBeGreaterThan(0);
    expect(await drain(segments)).toEqual(['a', 'b']);
    expect(segments.bytes).toBe(0);
    expect(segmentFiles().map((file) => statSync(file).size)).toEqual([0]);
  });

  it('should quarantine a corrupt record and go on with the ones behind it', async () => {
    let segments = await open();
    for (const text of ['a', 'bad', 'c']) await segments.append(record(text));
    await segments.close();
    const [file] = segmentFiles().filter((f) => statSync(f).size > 0);
    const bytes = readFileSync(file);
    bytes[bytes.indexOf('bad')] ^= 0x20;
    writeFileSync(file, bytes);

    segments = await open();
    expect(await drain(segments)).toEqual(['a', 'c']);
    expect(quarantined).toHaveLength(1);
    expect(quarantined[0].reason).toBe('checksum mismatch');
    expect(quarantined[0].bytes.toString()).toContain('Bad');
  });

  it('should quarantine garbage between records, found by the next marker', async () => {
    let segments = await open();
    await segments.append(record('a'));
    await segments.close();
    const [file] = segmentFiles().filter((f) => statSync(f).size > 0);
    writeFileSync(file, Buffer.concat([readFileSync(file), Buffer.from('garbage'), record('b')]));

    segments = await open();
    expect(await drain(segments)).toEqual(['a', 'b']);
    expect(quarantined.map((q) => q.bytes.toString())).toEqual(['garbage']);
  });

  it('should quarantine a torn tail and go on in the next segment', async () => {
    let segments = await open();
    for (const text of ['a', 'torn']) await segments.append(record(text));
    await segments.close();
    const [file] = segmentFiles().filter((f) => statSync(f).size > 0);
    truncateSync(file, statSync(file).size - 5);

    segments = await open();
    await segments.append(record('after'));
    expect(await drain(segments)).toEqual(['a', 'after']);
    expect(quarantined).toHaveLength(1);
    expect(quarantined[0].reason).toMatch(/^torn tail/);
  });

  it('should replay from the oldest segment when the checkpoint fails its checksum', async () => {
    let segments = await open();
    for (const text of ['a', 'b']) await segments.append(record(text));
    await segments.commit((await segments.head())!.next);
    await segments.close();
    const checkpoint = readFileSync(join(dir, 'checkpoint'));
    checkpoint[10] ^= 0xff;
    writeFileSync(join(dir, 'checkpoint'), checkpoint);

    segments = await open();
    expect(warnings).toEqual([expect.stringContaining('fails its checksum')]);
    expect(await drain(segments)).toEqual(['a', 'b']);
  });
});
