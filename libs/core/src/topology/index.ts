export type { CategorizedEndpoints } from './types.js';
export { categorizeEndpoints } from './categorize-endpoints.js';
