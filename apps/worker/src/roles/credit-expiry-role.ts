import { creditExpiryPass } from '../loops/credit-expiry-loop';
import { sweepRole } from './loop-handle';

/** `credit-expiry`: notices and expiries of credit lots, and their rollover (docs/lots.md). */
export const creditExpiryRole = sweepRole('credit-expiry', (settings) => settings.creditExpiry, creditExpiryPass);
