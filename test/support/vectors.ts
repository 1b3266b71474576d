import * as path from 'node:path';

/** Real notifications signed by the platforms' own SDK test suites; provenance in its README.md. */
export const VECTORS_DIR = path.resolve(__dirname, '../fixtures/vectors');
