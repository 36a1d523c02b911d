module.exports = { displayName: 'core', preset: '../../jest.preset.js' };
