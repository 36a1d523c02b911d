module.exports = { displayName: 'testing-fuzz', preset: '../../../jest.preset.js' };
