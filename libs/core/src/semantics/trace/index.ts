export { formatHostPort, parseHostPort, serviceOfPort, sortedEndpoints, traceWords } from './trace-words.js';
