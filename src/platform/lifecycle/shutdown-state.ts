import { Injectable } from '@nestjs/common';

/** Set once SIGTERM arrived: readiness answers 503 from then on, while requests are still served. */
@Injectable()
export class ShutdownState {
  private drainingSince?: Date;

  get draining(): boolean {
    return this.drainingSince !== undefined;
  }

  startDraining(): void {
    this.drainingSince ??= new Date();
  }
}
