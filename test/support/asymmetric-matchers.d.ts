/// <reference types="jest" />
/**
 * jest's asymmetric matchers as jest's own `expect` package types them: an `AsymmetricMatcher`,
 * where @types/jest declares each `any` so that it fits into any typed position. That `any` spread
 * into every expected object (`{ id: expect.any(String) }`), and typescript-eslint's no-unsafe-*
 * rules rightly flag it. These overloads come first (this file references jest's types, so it is
 * read after them and its declarations merge in front); the checks at run time are jest's own.
 * `toThrow` takes a matcher as jest does (`toThrow(expect.objectContaining({ code }))`).
 */
declare namespace jest {
  interface Expect {
    any(classType: unknown): AsymmetricMatcher;
    anything(): AsymmetricMatcher;
    stringMatching(str: string | RegExp): AsymmetricMatcher;
    stringContaining(str: string): AsymmetricMatcher;
    objectContaining<E = object>(obj: E): AsymmetricMatcher;
    arrayContaining<E = unknown>(arr: readonly E[]): AsymmetricMatcher;
  }
  interface InverseAsymmetricMatchers {
    stringMatching(str: string | RegExp): AsymmetricMatcher;
    stringContaining(str: string): AsymmetricMatcher;
    objectContaining<E = object>(obj: E): AsymmetricMatcher;
    arrayContaining<E = unknown>(arr: readonly E[]): AsymmetricMatcher;
  }
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unused-vars -- the type parameters must be @types/jest's to merge
  interface Matchers<R, T = {}> {
    toThrow(error: AsymmetricMatcher): R;
  }
}
