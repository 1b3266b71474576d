import { FileHandle, mkdir, open } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { flock } from 'fs-ext';
import { ConfigurationError } from '../../platform/config/env-validation';

const lockFile = promisify(
  flock as (fd: number, flags: 'exnb' | 'un', callback: (error: Error | null) => void) => void,
);

/** Another process holds the spool directory. */
export class SpoolInUse extends ConfigurationError {}

/** This process's locks: main.ts takes it before anything else starts, the spool then finds it held. */
const held = new Map<string, SpoolLock>();

/**
 * An exclusive flock(2) on `SPOOL_DIR/spool.lock`, held for the life of the process: two instances
 * on one directory would delete each other's segments and lose acked payments. The kernel lets go
 * of it when the process ends, SIGKILL included, so a restart never waits for a stale lock. The
 * file names its holder for the error a second instance reports.
 */
export class SpoolLock {
  private constructor(
    private readonly dir: string,
    private readonly handle: FileHandle,
  ) {}

  static async acquire(dir: string): Promise<SpoolLock> {
    const existing = held.get(dir);
    if (existing) return existing;
    await mkdir(dir, { recursive: true });
    const path = join(dir, 'spool.lock');
    const handle = await open(path, 'a+');
    try {
      await lockFile(handle.fd, 'exnb');
    } catch (error) {
      const holder = await readHolder(handle);
      await handle.close();
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      throw new SpoolInUse(
        `SPOOL_DIR ${dir} is in use by another instance (${holder}); give each instance a SPOOL_DIR of its own`,
      );
    }
    await handle.truncate(0);
    await handle.write(`pid ${process.pid} on ${hostname()} since ${new Date().toISOString()}\n`, 0);
    await handle.datasync();
    const lock = new SpoolLock(dir, handle);
    held.set(dir, lock);
    return lock;
  }

  async release(): Promise<void> {
    held.delete(this.dir);
    await this.handle.close(); // closing the last descriptor drops the flock
  }
}

async function readHolder(handle: FileHandle): Promise<string> {
  const text = (await handle.readFile('utf8')).trim();
  return text === '' ? 'holder unknown' : text.slice(0, 200);
}
