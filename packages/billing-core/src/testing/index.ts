export * from './test-outbox';
export * from './test-services';
