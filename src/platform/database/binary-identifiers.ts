import { QueryRunner } from 'typeorm';

/** The columns that hold identifiers: order, transaction, refund, merchant and event ids, in every table. */
const IDENTIFIER_COLUMNS = [
  'order_no',
  'transaction_id',
  'refund_no',
  'channel_refund_id',
  'merchant_id',
  'sub_merchant_id',
  'event_id',
];
/** What the identifier columns were before: case-insensitive, trailing spaces ignored. */
const CASE_INSENSITIVE = 'utf8mb4_unicode_ci';
const MAX_REPORTED = 20;

interface IdentifierColumn {
  table: string;
  column: string;
  definition: string;
}

/**
 * Makes the identifier columns binary NO PAD, so that `aB3`, `Ab3` and `aB3 ` are three order
 * numbers, as they are to the channels: of every table, or of `tables` only (a migration set that
 * creates tables later, such as the example handlers', calls it for its own). Identifiers that the
 * old collation took for one are never merged or split silently: it stops and names them, for an
 * operator to decide, changing nothing.
 */
export async function makeIdentifiersBinary(queryRunner: QueryRunner, tables?: readonly string[]): Promise<void> {
  const columns = (await identifierColumns(queryRunner)).filter((c) => !tables || tables.includes(c.table));
  const clashes = await identifiersThatDifferOnlyByCaseOrTrailingSpace(queryRunner, columns);
  if (clashes.length > 0) throw new Error(clashReport(clashes));
  await alterCollation(queryRunner, columns, await binaryNoPadCollation(queryRunner));
}

/** Back to the old collation (the migration's down). */
export async function makeIdentifiersCaseInsensitive(queryRunner: QueryRunner): Promise<void> {
  await alterCollation(queryRunner, await identifierColumns(queryRunner), CASE_INSENSITIVE);
}

/** MariaDB's binary NO PAD collation, or MySQL 8's (utf8mb4_bin pads: `a` = `a `). */
export async function binaryNoPadCollation(queryRunner: QueryRunner): Promise<string> {
  const [{ version }] = (await queryRunner.query('SELECT VERSION() AS version')) as Array<{ version: string }>;
  return /mariadb/i.test(version) ? 'utf8mb4_nopad_bin' : 'utf8mb4_0900_bin';
}

async function identifierColumns(queryRunner: QueryRunner): Promise<IdentifierColumn[]> {
  const rows = (await queryRunner.query(
    `SELECT TABLE_NAME AS \`table\`, COLUMN_NAME AS \`column\`, COLUMN_TYPE AS type, IS_NULLABLE AS nullable
     FROM information_schema.COLUMNS
     WHERE TABLE_SCHEMA = DATABASE() AND COLUMN_NAME IN (?) AND DATA_TYPE IN ('char', 'varchar')
     ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    [IDENTIFIER_COLUMNS],
  )) as Array<{ table: string; column: string; type: string; nullable: string }>;
  return rows.map((r) => ({
    table: r.table,
    column: r.column,
    definition: `${r.type} CHARACTER SET utf8mb4 COLLATE %s ${r.nullable === 'YES' ? 'NULL' : 'NOT NULL'}`,
  }));
}

interface Clash {
  column: string;
  tables: string[];
  variants: string[];
}

/**
 * Per kind of identifier (column name), across every table that holds it: values equal under the
 * old collation but different byte for byte. One side may be an order and the other a payment the
 * old collation attached to it.
 */
async function identifiersThatDifferOnlyByCaseOrTrailingSpace(
  queryRunner: QueryRunner,
  columns: IdentifierColumn[],
): Promise<Clash[]> {
  const clashes: Clash[] = [];
  for (const name of IDENTIFIER_COLUMNS) {
    const holders = columns.filter((c) => c.column === name);
    if (holders.length === 0) continue;
    const values = holders.map((c) => `SELECT \`${name}\` AS v FROM \`${c.table}\``).join(' UNION ALL ');
    const rows = (await queryRunner.query(
      `SELECT GROUP_CONCAT(HEX(b) ORDER BY b SEPARATOR ',') AS variants
       FROM (SELECT DISTINCT CAST(v AS BINARY) AS b FROM (${values}) AS held WHERE v IS NOT NULL) AS distinct_values
       GROUP BY CONVERT(b USING utf8mb4) COLLATE ${CASE_INSENSITIVE}
       HAVING COUNT(*) > 1 LIMIT ${MAX_REPORTED}`,
    )) as Array<{ variants: string }>;
    for (const row of rows) {
      const variants = row.variants.split(',').map((hex) => Buffer.from(hex, 'hex').toString('utf8'));
      clashes.push({ column: name, tables: holders.map((c) => c.table), variants });
    }
  }
  return clashes;
}

function clashReport(clashes: Clash[]): string {
  const lines = clashes.map(
    (c) => `  ${c.column} (in ${c.tables.join(', ')}): ${c.variants.map((v) => JSON.stringify(v)).join(' vs ')}`,
  );
  return (
    `identifiers that differ only by case or trailing spaces were taken for one and are kept apart from now on; ` +
    `decide which is which (and what paid what) before migrating, nothing was changed:\n${lines.join('\n')}`
  );
}

async function alterCollation(queryRunner: QueryRunner, columns: IdentifierColumn[], collation: string): Promise<void> {
  const tables = [...new Set(columns.map((c) => c.table))];
  for (const table of tables) {
    const changes = columns
      .filter((c) => c.table === table)
      .map((c) => `MODIFY \`${c.column}\` ${c.definition.replace('%s', collation)}`);
    await queryRunner.query(`ALTER TABLE \`${table}\` ${changes.join(', ')}`);
  }
}
