/** Bad input, not a broker fault: ingress answers it with a 4xx and enqueues nothing. */
export class InvalidArrivalEventError extends Error {
  override readonly name = 'InvalidArrivalEventError';

  constructor(
    /** Path of the offending field, e.g. 'attachments[1].data'. */
    readonly field: string,
    problem: string,
  ) {
    super(`invalid ArrivalEvent: ${field} ${problem}`);
  }
}
