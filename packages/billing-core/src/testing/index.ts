export * from './answered-each';
export * from './signal';
export * from './test-outbox';
export * from './test-services';
