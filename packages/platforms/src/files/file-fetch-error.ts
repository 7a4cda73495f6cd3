/** Why a file was not fetched; also the label of the attachment metric. */
export type FileFetchFailure = 'too_large' | 'refused' | 'failed';

/**
 * A download that did not happen or did not finish. The message is for the agent's note and the log,
 * so it names hosts, never URLs: a Telegram file URL carries the bot token.
 */
export class FileFetchError extends Error {
  override readonly name = 'FileFetchError';

  constructor(
    readonly failure: FileFetchFailure,
    message: string,
  ) {
    super(message);
  }
}
