import { isLoopbackUrl, msPer } from './database-cpu';

describe('isLoopbackUrl', () => {
  it.each([
    ['mysql://root@127.0.0.1:3306', true],
    ['mysql://root@localhost', true],
    ['mysql://root@[::1]:3306', true],
    ['mysql://root:pw@db.internal:3306', false],
    ['mysql://root@10.0.0.5:3306', false],
  ])('%s is on this machine: %s', (url, local) => {
    expect(isLoopbackUrl(url)).toBe(local);
  });
});

describe('msPer', () => {
  it('should give CPU milliseconds per unit, to two decimals', () => {
    expect(msPer(10, 13.5, 7000)).toBe(0.5);
    expect(msPer(0, 1, 3)).toBe(333.33);
  });

  it('should be undefined when the database CPU cannot be read', () => {
    expect(msPer(undefined, 5, 10)).toBeUndefined();
    expect(msPer(1, undefined, 10)).toBeUndefined();
  });
});
