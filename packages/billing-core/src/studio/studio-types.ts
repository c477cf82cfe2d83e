export type { StudioKind, StudioRequestRow, StudioRequestStatus } from '../db/schema';
export { studioRequestStatuses } from '../db/schema';
