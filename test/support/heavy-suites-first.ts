import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { HEAVY_SUITES, heavySuite } from './heavy-suites.js';

/** About how long a light suite runs alone, in seconds, for spacing the heavy ones. */
const LIGHT_SUITE_SECONDS = 7;

/**
 * The order of a run: the longest heavy suite first, then each next one only after about as many
 * light suites as the one before it keeps a worker busy, so that the other worker, running light
 * suites meanwhile, seldom reaches a heavy one that would have to wait its turn (one-heavy-at-a-time.ts).
 * The light suites keep the base order.
 */
export class HeavySuitesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => HEAVY_SUITES.indexOf(heavySuite(file.moduleId)!);
    const heavy = sorted.filter((file) => heavySuite(file.moduleId)).sort((a, b) => rank(a) - rank(b));
    const light = sorted.filter((file) => !heavySuite(file.moduleId));
    const order: TestSpecification[] = [];
    for (const file of heavy) {
      order.push(file);
      const gap = Math.round(heavySuite(file.moduleId)!.seconds / LIGHT_SUITE_SECONDS);
      order.push(...light.splice(0, gap));
    }
    return [...order, ...light];
  }
}
