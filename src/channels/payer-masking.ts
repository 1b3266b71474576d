const KEPT_AT_EACH_END = 2;

/** A payer's identifier as a viewer may see it: two characters kept at each end, `20************34`. */
export function maskIdentifier(value: string): string {
  if (value.length <= 2 * KEPT_AT_EACH_END) return '*'.repeat(value.length);
  const hidden = '*'.repeat(value.length - 2 * KEPT_AT_EACH_END);
  return `${value.slice(0, KEPT_AT_EACH_END)}${hidden}${value.slice(-KEPT_AT_EACH_END)}`;
}
