// The specs of bin/'s scripts sit beside them (no src/ here: bin/ is what users run).
module.exports = { displayName: 'bin', preset: '../jest.preset.js', testMatch: ['<rootDir>/*.spec.ts'] };
