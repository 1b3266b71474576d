import { QueryFailedError } from 'typeorm';
import { DomainError } from '../../domain/domain-error';
import { isDatabaseUnavailable } from './database-unavailable';

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
