import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import forge from 'node-forge';
import { ConfigurationError } from '../platform/config/env-validation';

/** One file a channel's options name: a key, a certificate or a chain, with the account it belongs to. */
export interface CredentialFile {
  path: string;
  /** The account (merchant or app id) whose option names it; '' for a file of the whole channel (UnionPay's root). */
  account: string;
  /** The option that names it, without its Path suffix: platformCert, publicKey, rootCert, signCert … */
  kind: string;
  /** A PKCS#12 file's password, when its option has one beside the path. */
  password?: string;
}

/** When one kind of certificate of an account stops being valid. */
export interface CredentialExpiry {
  account: string;
  kind: string;
  validTo: Date;
}

const PATH_OPTION = /^(.*?)(Path|Paths)$/;

/** Whether an option names a file (`…Path`), a list of files (`…Paths`), or neither (a key's `{id, path}` names it by `path`). */
export function fileOptionOf(name: string): 'one' | 'list' | undefined {
  const match = PATH_OPTION.exec(name);
  if (!match || match[1] === '') return undefined;
  return match[2] === 'Path' ? 'one' : 'list';
}

/** A key file of an account put in place of the configured one (or ones), for a trial. */
export interface ReplacedFile {
  account: string;
  kind: string;
  path: string;
}

/**
 * A copy of the options with the account's file of `kind` replaced by `path` (a list of such
 * files by that one file), named as credentialFilesOf names them; a ConfigurationError when the
 * account has no such file.
 */
export function withFileReplaced<T>(options: T, idField: string, replaced: ReplacedFile): T {
  let found = false;
  const walk = (value: unknown, account: string, name: string): unknown => {
    if (Array.isArray(value)) {
      if (name !== 'accounts') return value;
      return value.map((entry) => {
        const id = (entry as Record<string, unknown>)[idField];
        return walk(entry, typeof id === 'string' ? id : '', '');
      });
    }
    if (typeof value !== 'object' || value === null) return value;
    const copy: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) {
      const kind = key === 'path' ? name : PATH_OPTION.exec(key)?.[1];
      const isFile = typeof field === 'string' || Array.isArray(field);
      if (kind === replaced.kind && account === replaced.account && isFile) {
        copy[key] = typeof field === 'string' ? replaced.path : [replaced.path];
        found = true;
      } else copy[key] = walk(field, account, key);
    }
    return copy;
  };
  const copy = walk(options, '', '') as T;
  if (!found) throw new ConfigurationError(`account ${replaced.account} has no ${replaced.kind} file`);
  return copy;
}

/**
 * A platform key or certificate the merchant directory activated for an account (ChannelKeyFiles
 * keeps a private copy of its PEM at `path`): in place of the account's key file of `kind`, or,
 * during its overlap window (`beside`), beside the key in force before it, which is the key file's
 * own (no `beside.path`) or an earlier directory key's.
 */
export interface DirectoryKeyFile {
  account: string;
  kind: string;
  path: string;
  /** The id the platform names the key by (an option's `id` beside its `path`: WeChat Pay's public key id). */
  keyId?: string;
  beside?: { path?: string; keyId?: string };
}

/**
 * A copy of the options with the directory's keys in place: an account's file of `kind` replaced
 * by the key's (a list of files by that one), or, during an overlap window, the key added beside
 * the one in force: a list takes one more file; a single file (`publicKeyPath`) gets a sibling
 * option `next…` (`nextPublicKeyPath`, `nextPublicKey: {id, path}`) that the channel verifies
 * with too. A ConfigurationError when the account has no such file, or a key id is given for a
 * file that has none.
 */
export function withDirectoryKeys<T>(options: T, idField: string, keys: readonly DirectoryKeyFile[]): T {
  return keys.reduce((current, key) => withDirectoryKey(current, idField, key), options);
}

function withDirectoryKey<T>(options: T, idField: string, key: DirectoryKeyFile): T {
  let found = false;
  const next = (name: string) => `next${name[0].toUpperCase()}${name.slice(1)}`;
  const named = (field: Record<string, unknown>, path: string | undefined, keyId: string | undefined) => {
    if (keyId !== undefined && typeof field.id !== 'string') {
      throw new ConfigurationError(`the ${key.kind} of account ${key.account} is named by no key id`);
    }
    return { ...field, ...(path ? { path } : {}), ...(keyId ? { id: keyId } : {}) };
  };
  const walk = (value: unknown, account: string, name: string): unknown => {
    if (Array.isArray(value)) {
      if (name !== 'accounts') return value;
      return value.map((entry) => {
        const id = (entry as Record<string, unknown>)[idField];
        return walk(entry, typeof id === 'string' ? id : '', '');
      });
    }
    if (typeof value !== 'object' || value === null) return value;
    const copy: Record<string, unknown> = {};
    for (const [option, field] of Object.entries(value)) {
      if (account !== key.account) {
        copy[option] = walk(field, account, option);
        continue;
      }
      const kind = PATH_OPTION.exec(option)?.[1];
      const current =
        typeof field === 'object' && field !== null && !Array.isArray(field)
          ? (field as Record<string, unknown>)
          : undefined;
      if (option === key.kind && current && typeof current.path === 'string') {
        // A key with its id: `publicKey: {id, path}`.
        if (key.beside) {
          copy[option] = named(current, key.beside.path, key.beside.keyId);
          copy[next(option)] = named(current, key.path, key.keyId);
        } else copy[option] = named(current, key.path, key.keyId);
        found = true;
      } else if (kind === key.kind && (typeof field === 'string' || Array.isArray(field))) {
        if (key.keyId !== undefined) {
          throw new ConfigurationError(`the ${key.kind} of account ${key.account} is named by no key id`);
        }
        if (Array.isArray(field)) {
          const inForce: unknown[] = key.beside?.path ? [key.beside.path] : field;
          copy[option] = key.beside ? [...inForce, key.path] : [key.path];
        } else if (key.beside) {
          copy[option] = key.beside.path ?? field;
          copy[next(option)] = key.path;
        } else copy[option] = key.path;
        found = true;
      } else copy[option] = walk(field, account, option);
    }
    return copy;
  };
  const copy = walk(options, '', '') as T;
  if (!found) throw new ConfigurationError(`account ${key.account} has no ${key.kind} file`);
  return copy;
}

/**
 * Every file a channel's options name: the options whose name ends in Path or Paths (`appPrivateKeyPath`,
 * `platformCertPaths`), or an object's `path` (`publicKey: {id, path}`, `signCert: {path, password}`,
 * named after the object). Read from the options the adapter was built from, so that a channel adds a
 * key file by adding an option, and the file is watched (ChannelCredentials) without a list kept here.
 * An option of `accounts[i]` belongs to that account, named by `idField` (mchid, appId, merId).
 */
export function credentialFilesOf(options: unknown, idField: string): CredentialFile[] {
  const files: CredentialFile[] = [];
  const walk = (value: unknown, account: string, name: string): void => {
    if (Array.isArray(value)) {
      if (name === 'accounts') {
        for (const entry of value) {
          const id = (entry as Record<string, unknown>)[idField];
          walk(entry, typeof id === 'string' ? id : '', '');
        }
      }
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const fields = value as Record<string, unknown>;
    for (const [key, field] of Object.entries(fields)) {
      const kind = key === 'path' ? name : PATH_OPTION.exec(key)?.[1];
      const password = key === 'path' ? fields.password : kind ? fields[`${kind}Password`] : undefined;
      if (kind && typeof field === 'string') {
        files.push({ path: field, account, kind, ...(typeof password === 'string' ? { password } : {}) });
      } else if (kind && Array.isArray(field)) {
        for (const path of field) if (typeof path === 'string') files.push({ path, account, kind });
      } else walk(field, account, key);
    }
  };
  walk(options, '', '');
  return files;
}

/**
 * The expiry of each kind of certificate an account holds, read from its files: a PEM file's
 * certificates (a leaf and its chain, or a root bundle) work until the first of them expires; a
 * PKCS#12 file's, opened with its password, likewise. Where a kind has several files (a rotation's
 * old and new certificate), the latest counts: the kind works until then. Files that hold no
 * certificate (bare keys) give none; a file that cannot be read gives none (the channel's own
 * loading refuses it).
 */
export function certificateExpiries(files: readonly CredentialFile[]): CredentialExpiry[] {
  const latest = new Map<string, CredentialExpiry>();
  for (const file of files) {
    const dates = certificatesValidTo(file);
    if (dates.length > 0) {
      const validTo = new Date(Math.min(...dates.map((d) => d.getTime())));
      const key = `${file.account}\u0000${file.kind}`;
      const known = latest.get(key);
      if (!known || known.validTo < validTo) latest.set(key, { account: file.account, kind: file.kind, validTo });
    }
  }
  return [...latest.values()];
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

function certificatesValidTo(file: CredentialFile): Date[] {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file.path);
  } catch {
    return [];
  }
  const blocks = bytes.toString('latin1').match(PEM_CERTIFICATE);
  if (blocks) return blocks.flatMap((pem) => validToOfPem(pem));
  return file.password === undefined ? [] : validToOfPkcs12(bytes, file.password);
}

function validToOfPem(pem: string): Date[] {
  try {
    return [new Date(new X509Certificate(pem).validTo)];
  } catch {
    return [];
  }
}

function validToOfPkcs12(der: Buffer, password: string): Date[] {
  try {
    const p12 = forge.pkcs12.pkcs12FromAsn1(forge.asn1.fromDer(der.toString('binary')), false, password);
    const bags = p12.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag] ?? [];
    return bags.flatMap((bag) => (bag.cert ? [bag.cert.validity.notAfter] : []));
  } catch {
    return [];
  }
}
