import { QueryFailedError } from 'typeorm';
import { DomainError } from '../../domain/domain-error';
import { describeDatabaseRefusal, isDatabaseUnavailable, isTransientDatabaseError } from './database-unavailable';

function driverError(fields: { code?: string; errno?: number }): Error {
  return Object.assign(new Error('driver error'), fields);
}

describe(isDatabaseUnavailable.name, () => {
  it.each([
    ['a refused connection', driverError({ code: 'ECONNREFUSED', errno: -111 })],
    ['a lost connection', driverError({ code: 'PROTOCOL_CONNECTION_LOST' })],
    ['a query timeout', driverError({ code: 'PROTOCOL_SEQUENCE_TIMEOUT' })],
    ['a pool acquire timeout', driverError({ code: 'POOL_ACQUIRE_TIMEOUT' })],
    ['too many connections', driverError({ code: 'ER_CON_COUNT_ERROR', errno: 1040 })],
    ['a MariaDB statement timeout', driverError({ errno: 1969 })],
    [
      'a lost connection inside a QueryFailedError',
      new QueryFailedError('COMMIT', [], driverError({ code: 'PROTOCOL_CONNECTION_LOST' })),
    ],
  ])('should hold for %s', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a deadlock', new QueryFailedError('UPDATE', [], driverError({ code: 'ER_LOCK_DEADLOCK', errno: 1213 }))],
    [
      'a lock wait timeout',
      new QueryFailedError('UPDATE', [], driverError({ code: 'ER_LOCK_WAIT_TIMEOUT', errno: 1205 })),
    ],
    ['a duplicate key', new QueryFailedError('INSERT', [], driverError({ code: 'ER_DUP_ENTRY', errno: 1062 }))],
    ['an unknown order', new DomainError('OrderNotFound', 'order X is not registered')],
    ['a plain error', new Error('boom')],
    ['undefined', undefined],
    ['a string', 'ECONNREFUSED'],
  ])('should not hold for %s', (_what, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

function refused(code: string, errno: number, sqlMessage = 'refused'): QueryFailedError {
  return new QueryFailedError('SELECT 1', [], Object.assign(driverError({ code, errno }), { sqlMessage }));
}

describe(isTransientDatabaseError.name, () => {
  it.each([
    ['a lost connection', driverError({ code: 'PROTOCOL_CONNECTION_LOST' })],
    ['a deadlock (or a Galera certification failure)', refused('ER_LOCK_DEADLOCK', 1213)],
    ['a lock wait timeout', refused('ER_LOCK_WAIT_TIMEOUT', 1205)],
    ['a server turned read-only for a failover', refused('ER_OPTION_PREVENTS_STATEMENT', 1290)],
    ['a Galera node not ready', refused('ER_UNKNOWN_COM_ERROR', 1047)],
  ])('should hold for %s', (_what, error) => {
    expect(isTransientDatabaseError(error)).toBe(true);
  });

  it.each([
    ['an unknown system variable', refused('ER_UNKNOWN_SYSTEM_VARIABLE', 1193)],
    ['a missing table', refused('ER_NO_SUCH_TABLE', 1146)],
    ['a syntax error', refused('ER_PARSE_ERROR', 1064)],
    ['a duplicate key', refused('ER_DUP_ENTRY', 1062)],
    ['a plain error', new Error('boom')],
  ])('should not hold for %s: retrying will not mend it', (_what, error) => {
    expect(isTransientDatabaseError(error)).toBe(false);
  });
});

describe(describeDatabaseRefusal.name, () => {
  it("should name the cause in the server's words, with its code and errno", () => {
    const error = refused('ER_UNKNOWN_SYSTEM_VARIABLE', 1193, "Unknown system variable 'MAX_EXECUTION_TIME'");
    expect(describeDatabaseRefusal(error)).toBe(
      "Unknown system variable 'MAX_EXECUTION_TIME' (ER_UNKNOWN_SYSTEM_VARIABLE, errno 1193)",
    );
  });
});
