export * from './local-traffic-detector.js';
