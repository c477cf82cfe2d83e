import { grantInstallmentsPass } from '../loops/installments-loop';
import { sweepRole } from './loop-handle';

/** `installments`: grants the due installments of annual plans. */
export const installmentsRole = sweepRole('installments', (settings) => settings.installments, grantInstallmentsPass);
