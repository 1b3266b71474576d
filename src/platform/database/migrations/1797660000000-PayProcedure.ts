import { MigrationInterface, QueryRunner } from 'typeorm';
import { flavourOfVersion } from '../server-flavour';
import { requireTransactionAlive } from '../transaction-alive';

/**
 * `pay_v1`: a payment's writes as ONE call, committed inside (see settlement/pay-procedure.repository.ts for its
 * parameters and outcomes, and docs/architecture.md for how a version is replaced). In order:
 * - the claim (payment_callback): a payment claimed before fails on the unique key, as itself;
 * - the compare-and-set WAIT_PAY → PAID, only for the exact amount, currency and account;
 * - when the order moved: its history row, the outbox row, the paying delivery's record (unless the
 *   payment came from a trade query), COMMIT, and the outcome PAID;
 * - when it did not: the outcome NOT_MOVED, nothing committed, the transaction left open with the
 *   claim in it for the caller's anomaly path.
 * Any error rolls the whole transaction back before it reaches the caller (ROLLBACK, RESIGNAL): no
 * statement runs after a failed one, and a COMMIT that fails (a Galera certification conflict) comes
 * back as its own error, a deadlock. Each write after the claim, and the COMMIT, first requires the
 * transaction to be alive (requireTransactionAlive): one that a certification abort ended between
 * two statements is answered as that deadlock, instead of the rest running outside any transaction.
 *
 * The parameters take their columns' exact types and collations (read here, so that the same text
 * runs on MariaDB and on MySQL 8, whose binary collations differ): a comparison with a column then
 * uses its index, and a value too long for its column fails instead of being cut.
 */
export class PayProcedure1797660000000 implements MigrationInterface {
  name = 'PayProcedure1797660000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const type = await columnTypes(queryRunner);
    const [{ version }] = (await queryRunner.query('SELECT VERSION() AS version')) as Array<{ version: string }>;
    const alive = requireTransactionAlive(flavourOfVersion(version), 'v_claim');
    await queryRunner.query(`
CREATE PROCEDURE pay_v1(
  IN p_channel ${type('payment_callback', 'channel')},
  IN p_merchant_id ${type('payment_callback', 'merchant_id')},
  IN p_sub_merchant_id ${type('payment_callback', 'sub_merchant_id')},
  IN p_order_no ${type('payment_callback', 'order_no')},
  IN p_transaction_id ${type('payment_callback', 'transaction_id')},
  IN p_amount BIGINT,
  IN p_currency ${type('payment_order', 'currency')},
  IN p_paid_at DATETIME(3),
  IN p_at DATETIME(3),
  IN p_event_id ${type('outbox_event', 'event_id')},
  IN p_event_type ${type('outbox_event', 'type')},
  IN p_event_payload ${type('outbox_event', 'payload')},
  IN p_record_delivery BOOLEAN,
  IN p_delivery_event_type ${type('callback_delivery', 'event_type')},
  IN p_pays BOOLEAN,
  IN p_raw_body MEDIUMBLOB,
  IN p_headers ${type('callback_delivery', 'headers')},
  IN p_received_at DATETIME(3),
  IN p_processing_ms INT UNSIGNED,
  IN p_replay_key BINARY(32)
)
MODIFIES SQL DATA
BEGIN
  DECLARE v_claim BIGINT;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  INSERT INTO payment_callback
    (channel, transaction_id, merchant_id, sub_merchant_id, order_no, amount, currency, first_received_at, paid_at)
  VALUES
    (p_channel, p_transaction_id, p_merchant_id, p_sub_merchant_id, p_order_no, p_amount, p_currency, p_at, p_paid_at);
  SET v_claim = LAST_INSERT_ID();

  ${alive}
  UPDATE payment_order
     SET status = 'PAID', updated_at = p_at, next_query_at = NULL, channel = p_channel, merchant_id = p_merchant_id,
         sub_merchant_id = p_sub_merchant_id, transaction_id = p_transaction_id, paid_at = p_paid_at
   WHERE order_no = p_order_no AND status = 'WAIT_PAY' AND amount = p_amount AND currency = p_currency
     AND (merchant_id IS NULL OR (merchant_id = p_merchant_id AND channel = p_channel))
     AND (sub_merchant_id IS NULL OR sub_merchant_id <=> p_sub_merchant_id);

  IF ROW_COUNT() = 1 THEN
    ${alive}
    INSERT INTO order_status_change (order_no, from_status, to_status, event, cause, changed_at)
    VALUES (p_order_no, 'WAIT_PAY', 'PAID', 'PAY', p_transaction_id, p_at);

    ${alive}
    INSERT INTO outbox_event (event_id, type, order_no, payload, created_at)
    VALUES (p_event_id, p_event_type, p_order_no, p_event_payload, p_at);

    IF p_record_delivery THEN
      ${alive}
      INSERT INTO callback_delivery
        (channel, event_type, transaction_id, order_no, pays, outcome, raw_body, headers, received_at, processing_ms,
         replay_key)
      VALUES
        (p_channel, p_delivery_event_type, p_transaction_id, p_order_no, p_pays, 'PAID', p_raw_body, p_headers,
         p_received_at, p_processing_ms, p_replay_key)
      ON DUPLICATE KEY UPDATE replays = replays + 1, outcome = IF(outcome = 'DUPLICATE', VALUES(outcome), outcome);
    END IF;

    ${alive}
    COMMIT;
    SELECT 'PAID' AS outcome;
  ELSE
    SELECT 'NOT_MOVED' AS outcome;
  END IF;
END`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP PROCEDURE IF EXISTS pay_v1');
  }
}

/** `table.column`'s type as a parameter declaration: a text column's with its character set and collation. */
async function columnTypes(queryRunner: QueryRunner): Promise<(table: string, column: string) => string> {
  const rows = (await queryRunner.query(
    `SELECT TABLE_NAME AS \`table\`, COLUMN_NAME AS \`column\`, COLUMN_TYPE AS type,
            CHARACTER_SET_NAME AS charset, COLLATION_NAME AS collation
       FROM information_schema.COLUMNS
      WHERE TABLE_SCHEMA = DATABASE()
        AND TABLE_NAME IN ('payment_callback', 'payment_order', 'outbox_event', 'callback_delivery')`,
  )) as Array<{ table: string; column: string; type: string; charset: string | null; collation: string | null }>;
  return (table, column) => {
    const row = rows.find((r) => r.table === table && r.column === column);
    if (!row) throw new Error(`pay_v1: no column ${table}.${column}`);
    return row.charset ? `${row.type} CHARACTER SET ${row.charset} COLLATE ${row.collation}` : row.type;
  };
}
