export * from './shipped-config-values';
export * from './test-database';
