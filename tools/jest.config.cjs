module.exports = { displayName: 'tools', preset: '../jest.preset.js' };
