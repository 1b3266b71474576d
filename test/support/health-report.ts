/** A report of /health/ready or /health/live (terminus's shape: each indicator's status and what it adds), as the suites read it. */
export interface HealthReport {
  status: string;
  details: Record<string, { status: string } & Record<string, unknown>>;
}
