import { Loaded, useGet } from './ui';

/** The lists the console offers as filters and translates, as the API declares them (GET /admin/vocabulary). */
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
  refusedStatuses: string[];
  deliveryOutcomes: string[];
  auditActions: string[];
  eventTypes: string[];
  orderEvents: string[];
  resolutionReasons: string[];
  resolutionStatuses: string[];
  webhookDeliveryStatuses: string[];
  reconciliationStatuses: string[];
  reconciliationOutcomes: string[];
  /** Who a shop's own refund is asked by (the order service): the console marks those refunds. */
  shopRequester: string;
}

export const useVocabulary = (): Loaded<Vocabulary> => useGet<Vocabulary>('/admin/vocabulary');
