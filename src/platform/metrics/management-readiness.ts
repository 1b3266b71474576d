/**
 * What the management port answers on /health/ready: readiness and its report. The health module
 * provides it (it depends on this folder, not the other way round).
 */
export interface ManagementReadiness {
  report(): Promise<{ ready: boolean; report: unknown }>;
}

export const MANAGEMENT_READINESS = Symbol('MANAGEMENT_READINESS');
