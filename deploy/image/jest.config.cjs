module.exports = { displayName: 'deploy-image', preset: '../../jest.preset.js' };
