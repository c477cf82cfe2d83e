import { sweepStudioPass } from '../loops/studio-sweeper-loop';
import { sweepRole } from './loop-handle';

/** `studio-sweeper`: fails and refunds studio requests stuck in processing (their worker died). */
export const studioSweeperRole = sweepRole('studio-sweeper', (settings) => settings.studioSweeper, sweepStudioPass);
