module.exports = { displayName: 'backend-ipvs', preset: '../../jest.preset.js' };
