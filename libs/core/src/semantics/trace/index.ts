export { formatHostPort, parseHostPort, portLabel, serviceOfPort, sortedEndpoints, traceWords } from './trace-words.js';
