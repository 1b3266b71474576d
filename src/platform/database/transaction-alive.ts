import { ServerFlavour } from './server-flavour';

/**
 * A procedure's statement that fails with a deadlock unless its transaction is still alive: a
 * transaction that a Galera certification abort (or a deadlock) ended between two statements must
 * not go on writing. On MariaDB the server says it (`@@in_transaction`); MySQL has no such variable,
 * so there the row the procedure claimed (its id in `claimVariable`) must still be visible, which it
 * is only inside the live transaction that inserted it.
 * The migration of each procedure version writes it into the procedure: a changed guard is a new
 * version (docs/architecture.md, "The payment procedure"), never an edit of this text alone.
 */
export function requireTransactionAlive(flavour: ServerFlavour, claimVariable: string): string {
  const alive =
    flavour === 'mariadb'
      ? '@@in_transaction = 1'
      : `EXISTS (SELECT 1 FROM payment_callback WHERE id = ${claimVariable})`;
  return `IF NOT (${alive}) THEN
    SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT = 'the transaction ended in the middle of the procedure';
  END IF;`;
}
