import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { DomainError } from '../../../domain/domain-error';

/** Far above any v2 notification or answer (about 1-2 KB); the HTTP body limit comes first anyway. */
export const MAX_V2_XML_BYTES = 32 * 1024;

const CDATA = '#cdata';
const TEXT = '#text';

/**
 * Entities are never expanded (processEntities: false) and a DOCTYPE is refused before parsing,
 * so neither an external entity (XXE) nor an entity bomb can reach the parser; values stay strings.
 */
const parser = new XMLParser({
  processEntities: false,
  htmlEntities: false,
  ignoreAttributes: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  parseTagValue: false,
  trimValues: false,
  cdataPropName: CDATA,
});

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' };

/**
 * The fields of a flat v2 XML document (`<xml><a>1</a>…</xml>`, or `<root>` for a decrypted
 * refund), each a string exactly as signed: CDATA as it is, text with XML's predefined and numeric
 * character references decoded. Anything else (DOCTYPE, entities, nesting, repeated fields) is
 * refused as malformed.
 */
export function readV2Xml(xml: Buffer | string, root: 'xml' | 'root', what: string): Record<string, string> {
  const text = Buffer.isBuffer(xml) ? xml.toString('utf8') : xml;
  if (Buffer.byteLength(text, 'utf8') > MAX_V2_XML_BYTES) {
    throw malformed(`${what} is larger than ${MAX_V2_XML_BYTES} bytes`);
  }
  if (/<!(DOCTYPE|ENTITY)/i.test(text)) throw malformed(`${what} carries a DOCTYPE or ENTITY declaration, refused`);
  refuseReservedNames(text, what);
  const document = parseWellFormed(text, what);
  const elements = Object.keys(document);
  if (elements.length !== 1 || elements[0] !== root) throw malformed(`${what} must be one <${root}> element`);
  const body = document[root];
  if (typeof body === 'string') {
    if (body.trim() !== '') throw malformed(`${what}: <${root}> holds text, not fields`);
    return {};
  }
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (name === TEXT) {
      if (typeof value !== 'string' || value.trim() !== '') throw malformed(`${what}: text between the fields`);
      continue;
    }
    fields[name] = fieldValue(value, `${what} field ${name}`);
  }
  return fields;
}

/**
 * Names every object inherits (`__proto__`, `constructor`, `toString`, …) are refused before the
 * parser sees them: it throws on some and silently renames others, and no v2 field is named so.
 */
const RESERVED_NAMES = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);
const CDATA_SECTIONS = /<!\[CDATA\[[\s\S]*?\]\]>/g;
const ELEMENT_NAMES = /<\/?([^\s/>!?]+)/g;

function refuseReservedNames(text: string, what: string): void {
  for (const [, name] of text.replace(CDATA_SECTIONS, '').matchAll(ELEMENT_NAMES)) {
    if (RESERVED_NAMES.has(name) || name.startsWith('__')) throw malformed(`${what} carries a reserved element name`);
  }
}

/** Whatever the parser objects to (depth, names, syntax) is the sender's mistake, never ours: a 400. */
function parseWellFormed(text: string, what: string): Record<string, unknown> {
  try {
    if (XMLValidator.validate(text) !== true) throw malformed(`${what} is not well-formed XML`);
    return parser.parse(text) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw malformed(`${what} could not be parsed as flat XML`);
  }
}

function fieldValue(value: unknown, what: string): string {
  if (typeof value === 'string') return decodeReferences(value, what);
  if (Array.isArray(value)) throw malformed(`${what} appears more than once`);
  const parts = Object.keys(value as object);
  const cdata = (value as Record<string, unknown>)[CDATA];
  // One CDATA section, maybe with whitespace around it.
  if (parts.every((p) => p === CDATA || p === TEXT) && typeof cdata === 'string') {
    const text = (value as Record<string, unknown>)[TEXT];
    if (text === undefined || (typeof text === 'string' && text.trim() === '')) return cdata;
  }
  throw malformed(`${what} must be text or one CDATA section, not nested elements`);
}

function decodeReferences(text: string, what: string): string {
  return text.replace(/&([^;&\s]{1,10});/g, (_match, name: string) => {
    if (PREDEFINED[name] !== undefined) return PREDEFINED[name];
    const code = /^#x([0-9a-f]{1,6})$/i.exec(name)?.[1] ?? /^#(\d{1,7})$/.exec(name)?.[1];
    if (code !== undefined) {
      const point = name[1] === 'x' || name[1] === 'X' ? parseInt(code, 16) : parseInt(code, 10);
      if (point <= 0x10ffff) return String.fromCodePoint(point);
    }
    throw malformed(`${what} refers to entity &${name};, which is never expanded`);
  });
}

/** `<xml>` with each field in CDATA, as WeChat writes its own: for answers and requests. */
export function writeV2Xml(fields: Record<string, string>, root: 'xml' | 'root' = 'xml'): string {
  const inner = Object.entries(fields)
    .map(([name, value]) => `<${name}><![CDATA[${value.replaceAll(']]>', ']]]]><![CDATA[>')}]]></${name}>`)
    .join('');
  return `<${root}>${inner}</${root}>`;
}

function malformed(message: string): DomainError {
  return new DomainError('MalformedRequest', message);
}
