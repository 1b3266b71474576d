/**
 * Where src/admin imports the dead letters from until it names the files below: the read model
 * (dead-letters.queries.ts) and the requeue (dead-letters.repository.ts). No SQL here.
 */
export type { DeadLetter } from './dead-letters.queries';
export { countDeadLetters, listDeadLetters } from './dead-letters.queries';
export { replayDeadLetters, requeueDeadLetters } from './dead-letters.repository';
