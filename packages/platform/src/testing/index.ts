export * from './log-lines';
export * from './shipped-config-values';
export * from './test-database';
