import { replicaFor } from './http-load';

describe('replicaFor', () => {
  it('should send consecutive deliveries to the replicas in turn', () => {
    expect(Array.from({ length: 7 }, (_, i) => replicaFor(i, 3))).toEqual([0, 1, 2, 0, 1, 2, 0]);
  });

  it('should give every replica its share of the deliveries', () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 1000; i++) counts[replicaFor(i, 4)]++;

    expect(counts).toEqual([250, 250, 250, 250]);
  });

  it('should send everything to the one replica there is', () => {
    expect([0, 1, 2].map((i) => replicaFor(i, 1))).toEqual([0, 0, 0]);
  });
});
