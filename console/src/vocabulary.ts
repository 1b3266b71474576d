import { Loaded, useGet } from './ui';

/** The lists the console offers as filters, as the API declares them (GET /admin/vocabulary). */
export interface Vocabulary {
  channels: string[];
  anomalyTypes: string[];
  anomalyStatuses: string[];
  refundPurposes: string[];
  refundStatuses: string[];
  refusalReasons: string[];
}

export const useVocabulary = (): Loaded<Vocabulary> => useGet<Vocabulary>('/admin/vocabulary');
