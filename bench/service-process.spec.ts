import { BenchUsageError, parseReplicas, replicaPorts } from './service-process';

describe('replicas and their ports', () => {
  it('should give each replica the next port from the base', () => {
    expect(replicaPorts(3960, 4)).toEqual([3960, 3961, 3962, 3963]);
    expect(replicaPorts(3901, 1)).toEqual([3901]);
  });

  it('should refuse ports beyond 65535', () => {
    expect(() => replicaPorts(65534, 3)).toThrow(BenchUsageError);
  });

  it.each(['0', '-1', '2.5', 'two', '33'])('should refuse --replicas %s', (text) => {
    expect(() => parseReplicas(text)).toThrow('--replicas must be an integer from 1 to 32');
  });

  it('should take a count from 1 to 32', () => {
    expect(parseReplicas('1')).toBe(1);
    expect(parseReplicas('32')).toBe(32);
  });
});
