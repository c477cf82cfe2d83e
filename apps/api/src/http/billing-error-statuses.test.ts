import { billingErrorCodes } from '@tally/billing-core';
import { httpStatusByBillingErrorCode } from './billing-error-statuses';

describe('the status table of billing error codes', () => {
  it('answers every billing error code, and only those, with an error status', () => {
    expect(Object.keys(httpStatusByBillingErrorCode).sort()).toEqual([...billingErrorCodes].sort());
    for (const [code, status] of Object.entries(httpStatusByBillingErrorCode)) {
      expect({ code, isError: status >= 400 && status <= 599 }).toEqual({ code, isError: true });
    }
  });
});
