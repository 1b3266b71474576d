import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { parse as parseYaml } from 'yaml';
import { ConfigurationError } from '../platform/config/env-validation';

const VARIABLE = 'PAYMENT_ACCOUNTS_FILE';

/**
 * A channel's section of PAYMENT_ACCOUNTS_FILE: the channel declares it in its own folder, this
 * file only reads the document and applies the schema.
 */
export interface AccountsSection<Entry extends object, Account> {
  /** Its key in the file, whose value is the list of its accounts. */
  readonly key: string;
  /** One entry's fields, as a class-validator class: unknown fields are refused. */
  readonly schema: new () => Entry;
  /** The field naming an account: the same value twice is refused. */
  readonly idField: keyof Entry & string;
  /** The valid entry as the channel's account; throws accountsFileError(`${where} ...`) for rules across fields. */
  toAccount(entry: Entry, where: string): Account;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a section of any channel's entry class: keyof makes Entry invariant, so neither object nor never takes them all
export type AnyAccountsSection = AccountsSection<any, unknown>;

/** PAYMENT_ACCOUNTS_FILE's accounts of one channel; undefined when the variable is not set. */
export function readAccountsSection<Entry extends object, Account>(
  env: NodeJS.ProcessEnv,
  section: AccountsSection<Entry, Account>,
): Account[] | undefined {
  const path = env[VARIABLE]?.trim();
  if (!path) return undefined;
  return accountsOf(parseDocument(path), section);
}

/**
 * The whole file, every section validated, and a key no registered channel owns refused;
 * undefined when the variable is not set.
 */
export function readAccountsFile(
  env: NodeJS.ProcessEnv,
  sections: readonly AnyAccountsSection[],
): Record<string, unknown[]> | undefined {
  const path = env[VARIABLE]?.trim();
  if (!path) return undefined;
  const document = parseDocument(path);
  const keys = sections.map((s) => s.key);
  const expected = keys.map((k) => `"${k}"`).join(' and/or ');
  const unknown = Object.keys(document).filter((k) => !keys.includes(k));
  if (unknown.length > 0) throw accountsFileError(`unknown key ${unknown.join(', ')} (expected ${expected})`);
  return Object.fromEntries(sections.map((section) => [section.key, accountsOf(document, section)]));
}

function accountsOf<Entry extends object, Account>(
  document: Record<string, unknown>,
  section: AccountsSection<Entry, Account>,
): Account[] {
  const valid = entries(document, section.key, section.schema);
  refuseDuplicates(
    section.key,
    valid.map((entry) => String(entry[section.idField])),
    section.idField,
  );
  return valid.map((entry, index) => section.toAccount(entry, `${section.key}[${index}]`));
}

/** With the file, every account is in it: a per-account variable beside it is a mistake. */
export function refuseBesideFile(env: NodeJS.ProcessEnv, variables: string[]): void {
  const set = variables.filter((name) => env[name]?.trim());
  if (set.length > 0) {
    throw new ConfigurationError(
      `Invalid configuration: ${set.join(', ')} ${set.length > 1 ? 'are' : 'is'} set beside ${VARIABLE}; put every account in the file`,
    );
  }
}

/** A mistake in the file, named as such. */
export function accountsFileError(message: string): ConfigurationError {
  return new ConfigurationError(`Invalid configuration: ${VARIABLE}: ${message}`);
}

/**
 * One entry of a channel's section, checked as the file's are (the same validator, the same
 * messages, naming the field after `where`): the channel's account, or a ConfigurationError.
 */
export function accountOfEntry<Entry extends object, Account>(
  section: AccountsSection<Entry, Account>,
  raw: unknown,
  where: string,
): Account {
  const [entry] = entries({ [where]: [raw] }, where, section.schema, () => where);
  return section.toAccount(entry, where);
}

/** An accountsFileError's message without its prefix: what the admin API answers. */
export function withoutAccountsFilePrefix(message: string): string {
  return message.replace(/^Invalid configuration:\s*/, '').replace(`${VARIABLE}: `, '');
}

function parseDocument(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw accountsFileError(`cannot read ${path} (${(error as Error).message})`);
  }
  let document: unknown;
  try {
    // YAML is a superset of JSON: one parser reads both.
    document = parseYaml(text);
  } catch (error) {
    throw accountsFileError(`${path} is neither JSON nor YAML (${(error as Error).message.split('\n')[0]})`);
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw accountsFileError(`${path} must hold an object with a list of accounts per channel`);
  }
  return document as Record<string, unknown>;
}

function entries<T extends object>(
  document: Record<string, unknown>,
  channel: string,
  schema: new () => T,
  whereOf = (index: number) => `${channel}[${index}]`,
): T[] {
  const list = document[channel] ?? [];
  if (!Array.isArray(list)) throw accountsFileError(`${channel} must be a list of accounts`);
  return list.map((raw: unknown, index) => {
    const where = whereOf(index);
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw accountsFileError(`${where} must be an object`);
    const entry = plainToInstance(schema, raw);
    const errors = validateSync(entry, { whitelist: true, forbidNonWhitelisted: true });
    if (errors.length > 0) throw accountsFileError(describe(where, errors).join('; '));
    return entry;
  });
}

function describe(where: string, errors: ValidationError[]): string[] {
  return errors.flatMap((e) => [
    ...Object.values(e.constraints ?? {}).map((message) =>
      message.replace(e.property, `${where}.${e.property}`).replace('should not exist', 'is not a known field'),
    ),
    ...describe(`${where}.${e.property}`, e.children ?? []),
  ]);
}

function refuseDuplicates(channel: string, ids: string[], field: string): void {
  const seen = new Set<string>();
  ids.forEach((id, index) => {
    if (seen.has(id)) throw accountsFileError(`${channel}[${index}].${field} ${id} appears twice`);
    seen.add(id);
  });
}
