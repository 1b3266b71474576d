import { ConfigurationError } from '../platform/config/env-validation';
import { accountOfEntry, AnyAccountsSection, withoutAccountsFilePrefix } from './accounts-file';
import { fileOptionOf } from './credential-files';

/** A file's content: PEM (or any text) as is, or a binary file (a .p12, a .pfx) in base64. */
export type FileContent = string | { base64: string };

/**
 * An account as the admin API takes it: `entry` is one entry of the channel's section of
 * PAYMENT_ACCOUNTS_FILE, but each file it would name by a path (`…Path`, `…Paths`, a key's
 * `{id, path}`) is given by its content in `files`, under the option's name (`merchantPrivateKeyPath`,
 * `platformCertPaths`: a list, `platformPublicKey.path`). Secrets that are values (apiV3Key,
 * passwords) stay in `entry`.
 */
export interface AccountMaterial {
  entry: Record<string, unknown>;
  files: Record<string, FileContent | FileContent[]>;
}

/** Writes one file's bytes where the channel can read them (a private directory), and answers its path. */
export type FileWriter = (option: string, bytes: Buffer) => string;

const MAX_FILE_BYTES = 256 * 1024;

/** A mistake in the material: the message names the field (entry.…, files.…), never a value. */
export class MaterialError extends Error {}

/**
 * The material as the channel's account: its files written (`write`), their paths put in the entry,
 * the entry checked by the accounts file's own validator; a MaterialError naming what is wrong.
 */
export function accountOfMaterial(section: AnyAccountsSection, material: unknown, write: FileWriter): object {
  const { entry, files } = shapeOf(material);
  refusePaths(entry, 'entry');
  const withPaths: Record<string, unknown> = { ...entry };
  for (const [option, content] of Object.entries(files)) {
    const nested = /^([A-Za-z]\w*)\.path$/.exec(option);
    const kind = fileOptionOf(option);
    if (nested) {
      const parent = withPaths[nested[1]];
      if (typeof parent !== 'object' || parent === null || Array.isArray(parent)) {
        throw new MaterialError(`files.${option} needs entry.${nested[1]} (an object, without its path)`);
      }
      withPaths[nested[1]] = { ...parent, path: write(option, bytesOf(content, `files.${option}`)) };
    } else if (kind === 'one') {
      withPaths[option] = write(option, bytesOf(content, `files.${option}`));
    } else if (kind === 'list') {
      if (!Array.isArray(content) || content.length === 0) {
        throw new MaterialError(`files.${option} must be a list of the files' contents`);
      }
      withPaths[option] = content.map((c, i) => write(option, bytesOf(c, `files.${option}[${i}]`)));
    } else {
      throw new MaterialError(`files.${option} names no file option (…Path, …Paths, or <option>.path)`);
    }
  }
  try {
    return accountOfEntry(section, withPaths, 'entry') as object;
  } catch (error) {
    if (error instanceof ConfigurationError) throw new MaterialError(withoutAccountsFilePrefix(error.message));
    throw error;
  }
}

/** The account id the entry names (its section's id field), as given. */
export function accountIdOf(section: AnyAccountsSection, material: AccountMaterial): string {
  const id = material.entry[section.idField];
  return typeof id === 'string' ? id : '';
}

function shapeOf(material: unknown): AccountMaterial {
  const { entry, files } = (material ?? {}) as Partial<AccountMaterial>;
  if (!isObject(entry)) throw new MaterialError('entry must be an object: one entry of the accounts file');
  if (files !== undefined && !isObject(files))
    throw new MaterialError("files must be an object: option → the file's content");
  return { entry, files: files ?? {} };
}

/** A path in the entry would name a file of this replica's disk: the content belongs in `files`. */
function refusePaths(value: Record<string, unknown>, where: string): void {
  for (const [option, field] of Object.entries(value)) {
    if (fileOptionOf(option) || (option === 'path' && where !== 'entry')) {
      throw new MaterialError(
        `${where}.${option} is a path: give the file's content in files.${where === 'entry' ? option : `${where.slice('entry.'.length)}.path`}`,
      );
    }
    if (isObject(field)) refusePaths(field, `${where}.${option}`);
  }
}

function bytesOf(content: unknown, where: string): Buffer {
  let bytes: Buffer;
  if (typeof content === 'string') bytes = Buffer.from(content, 'utf8');
  else if (
    isObject(content) &&
    typeof content.base64 === 'string' &&
    /^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(content.base64)
  )
    bytes = Buffer.from(content.base64, 'base64');
  else throw new MaterialError(`${where} must be the file's text, or {"base64": …} for a binary file`);
  if (bytes.length === 0 || bytes.length > MAX_FILE_BYTES) {
    throw new MaterialError(`${where} must hold 1 to ${MAX_FILE_BYTES} bytes`);
  }
  return bytes;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
