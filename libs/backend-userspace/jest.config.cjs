module.exports = { displayName: 'backend-userspace', preset: '../../jest.preset.js' };
