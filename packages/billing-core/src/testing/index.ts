export * from './test-services';
