/**
 * Deterministic generators of hostile notification bodies: names that are
 * properties of every JavaScript object, deep nesting, repeated and odd names, broken references,
 * stray bytes. Seeded, so a failing case names a document that can be rebuilt; no dependency.
 */

/** mulberry32: a small seeded PRNG, enough to mix the ingredients below reproducibly. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

/** Every name an object inherits, and the ones parsers guard or mangle. */
export const OBJECT_PROPERTY_NAMES: readonly string[] = [
  ...Object.getOwnPropertyNames(Object.prototype),
  'prototype',
  '__defineGetter__',
  'then',
  'length',
];

const ODD_NAMES = ['a:b', 'xmlns', 'xml', 'x-y', '_', 'a.b', 'Ω', 'return_code', 'sign', 'req_info', 'A'.repeat(300)];

const DEPTHS = [2, 50, 1000, 3000, 20000];

function nested(name: string, depth: number, inner = 'x'): string {
  return `<${name}>`.repeat(depth) + inner + `</${name}>`.repeat(depth);
}

/** XML bodies, each a document a v2 endpoint must refuse (or read) without an unexpected error. */
export function hostileXmlDocuments(root: 'xml' | 'root' = 'xml', count = 120, seed = 35): string[] {
  const random = seededRandom(seed);
  const wrap = (inner: string) => `<${root}>${inner}</${root}>`;
  const fixed = [
    ...OBJECT_PROPERTY_NAMES.map((name) => wrap(`<return_code>SUCCESS</return_code><${name}>x</${name}>`)),
    ...OBJECT_PROPERTY_NAMES.map((name) => wrap(`<${name}><![CDATA[x]]></${name}>`)),
    ...OBJECT_PROPERTY_NAMES.map((name) => `<${name}>x</${name}>`),
    ...OBJECT_PROPERTY_NAMES.map((name) => wrap(`<a><${name}>1</${name}></a>`)),
    ...DEPTHS.map((depth) => wrap(nested('a', depth))),
    ...DEPTHS.map((depth) => nested(root, depth)),
    wrap('<a>&#0;</a>'),
    wrap('<a>&#x110000;</a>'),
    wrap('<a>&#99999999999;</a>'),
    wrap('<a>&unknown;</a>'),
    wrap('<a attr="&#x41;">x</a>'),
    wrap('<?xml-stylesheet href="x"?><a>x</a>'),
    wrap('<!-- c --><a>x</a><!-- d -->'),
    wrap('<a><![CDATA[x]]>y<![CDATA[z]]></a>'),
    wrap('<a><![CDATA[x]]><b/></a>'),
    wrap('<a/>'),
    wrap('<a></b>'),
    `\uFEFF${wrap('<a>x</a>')}`,
    `<?xml version="1.0" encoding="UTF-16"?>${wrap('<a>x</a>')}`,
    wrap('<a>x</a>') + wrap('<a>y</a>'),
    `<${root}>`,
    '',
    ' ',
    '<',
    '<>',
    '<xml',
    'xml',
    '{"return_code":"SUCCESS"}',
  ];
  const generated = Array.from({ length: count }, () => randomXml(random, root));
  return [...fixed, ...generated];
}

function randomXml(random: () => number, root: string): string {
  const parts = Array.from({ length: 1 + Math.floor(random() * 4) }, () => randomElement(random));
  const document = `<${root}>${parts.join('')}</${root}>`;
  return random() < 0.2 ? truncate(random, document) : document;
}

function randomElement(random: () => number): string {
  const name = random() < 0.6 ? pick(random, OBJECT_PROPERTY_NAMES) : pick(random, ODD_NAMES);
  const value = pick(random, [
    'x',
    '<![CDATA[x]]>',
    '&lt;',
    '&#65;',
    '&#xFFFFFFF;',
    '&bogus;',
    nested(pick(random, OBJECT_PROPERTY_NAMES), 1 + Math.floor(random() * 4)),
    nested('b', pick(random, DEPTHS)),
    '<![CDATA[]]]]><![CDATA[>]]>',
    '\u0000',
  ]);
  const element = `<${name}>${value}</${name}>`;
  return random() < 0.25 ? element + element : element;
}

function truncate(random: () => number, text: string): string {
  return text.slice(0, Math.floor(random() * text.length));
}

/** Form bodies (`application/x-www-form-urlencoded`): keys and escapes a form parser must survive. */
export function hostileFormBodies(count = 80, seed = 35): string[] {
  const random = seededRandom(seed);
  const fixed = [
    ...OBJECT_PROPERTY_NAMES.map((name) => `${encodeURIComponent(name)}=x&sign=x`),
    ...OBJECT_PROPERTY_NAMES.map((name) => `${encodeURIComponent(name)}[a]=x`),
    'sign=%zz&a=%',
    'a=%C0%AF&sign=%ED%A0%80',
    '&&&===&',
    'sign=a&sign=b',
    '%00=%00',
    'a'.repeat(10_000),
    Array.from({ length: 2_000 }, (_, i) => `k${i}=v`).join('&'),
  ];
  const generated = Array.from({ length: count }, () =>
    Array.from({ length: 1 + Math.floor(random() * 5) }, () => {
      const key = random() < 0.6 ? pick(random, OBJECT_PROPERTY_NAMES) : pick(random, ODD_NAMES);
      const value = pick(random, ['x', '', '%', '%zz', '%E4%B8', 'a=b', '{"a":1}', '<xml/>']);
      return `${encodeURIComponent(key)}=${value}`;
    }).join('&'),
  );
  return [...fixed, ...generated];
}

/** JSON texts: prototype keys, deep nesting, odd numbers, broken syntax. */
export function hostileJsonTexts(count = 60, seed = 35): string[] {
  const random = seededRandom(seed);
  const fixed = [
    ...OBJECT_PROPERTY_NAMES.map((name) => JSON.stringify({ [name]: { a: 1 }, id: 'x' })),
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '['.repeat(5000) + ']'.repeat(5000),
    '{"a":'.repeat(5000) + '1' + '}'.repeat(5000),
    '{"amount":1e999999}',
    '{"amount":{"total":-0}}',
    '',
    'null',
    '"x"',
    '[]',
    '{',
    '\uFEFF{}',
  ];
  const generated = Array.from({ length: count }, () => {
    const key = random() < 0.7 ? pick(random, OBJECT_PROPERTY_NAMES) : pick(random, ODD_NAMES);
    const value = pick(random, ['1', '"x"', 'null', '[]', '{}', '{"a":{"b":[1,{"c":null}]}}', '1e400', '"\\ud800"']);
    const text = `{"${key}":${value}}`;
    return random() < 0.2 ? truncate(random, text) : text;
  });
  return [...fixed, ...generated];
}
