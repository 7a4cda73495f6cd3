/**
 * `work`'s answer, or a rejection once `ms` have passed without one. The work itself goes on; the
 * caller only stops waiting for it (a platform lookup must not hold up a webhook's acknowledgement).
 */
export async function withinDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
