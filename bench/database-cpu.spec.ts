import { isLoopbackUrl, msPer, netOfIdle } from './database-cpu';

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

describe('netOfIdle', () => {
  it("should take the idle rate over the window off the run's figure", () => {
    // 85 ms/s for 93.9 s is 7,981.5 ms, 0.50 ms of each of 15,950 deliveries.
    expect(netOfIdle(0.95, 85, 93.9, 15950)).toBe(0.45);
  });

  it('should never go below zero when the others were busier during the idle seconds than during the run', () => {
    expect(netOfIdle(0.2, 100, 10, 1000)).toBe(0);
  });

  it('should be undefined without both readings', () => {
    expect(netOfIdle(undefined, 5, 10, 100)).toBeUndefined();
    expect(netOfIdle(0.5, undefined, 10, 100)).toBeUndefined();
  });
});
