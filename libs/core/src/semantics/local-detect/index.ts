export { type LocalTrafficDetector, NO_LOCAL_DETECTOR } from './local-traffic-detector.js';
export { sameLocalDetector, selectLocalDetector } from './select-local-detector.js';
export { localDetectorAfterNodeEvent } from './node-local-detector.js';
