// ferry as a library: the typed client and its logger.
export * from './api/index.js';
export { createLogger, type Logger } from './log.js';
