import { jsonNestingExceeds } from './notify-body';

describe(jsonNestingExceeds.name, () => {
  const sut = (json: string, max: number) => jsonNestingExceeds(Buffer.from(json), max);

  it('should accept nesting up to the limit', () => {
    expect(sut('{"a":[{"b":[1]}]}', 4)).toBe(false);
  });

  it('should refuse one level more than the limit', () => {
    expect(sut('{"a":[{"b":[[1]]}]}', 4)).toBe(true);
  });

  it('should not count brackets inside strings, escaped quotes included', () => {
    expect(sut('{"a":"[[[[{{{{\\"[[[["}', 1)).toBe(false);
  });

  it('should count depth, not brackets: many siblings stay shallow', () => {
    expect(sut(`[${Array(10_000).fill('[1]').join(',')}]`, 2)).toBe(false);
  });

  it('should refuse 10,000 levels without parsing them', () => {
    expect(sut(`${'['.repeat(10_000)}${']'.repeat(10_000)}`, 32)).toBe(true);
  });
});
