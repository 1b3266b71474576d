import { Loaded, useGet } from './ui';

/** The lists the console offers as filters, as the API declares them (GET /admin/vocabulary). */
export interface Vocabulary {
  channels: string[];
  anomalyTypes: string[];
  anomalyStatuses: string[];
  refundPurposes: string[];
  refundStatuses: string[];
  orderStatuses: string[];
  /** Integer minor units; null when no refund waits for a second admin. */
  refundApprovalThreshold: number | null;
  refusalReasons: string[];
}

export const useVocabulary = (): Loaded<Vocabulary> => useGet<Vocabulary>('/admin/vocabulary');
