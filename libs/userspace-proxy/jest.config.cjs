module.exports = { displayName: 'userspace-proxy', preset: '../../jest.preset.js' };
