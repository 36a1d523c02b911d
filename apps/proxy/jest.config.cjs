module.exports = { displayName: 'proxy', preset: '../../jest.preset.js' };
