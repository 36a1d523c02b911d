module.exports = { displayName: 'testing-apiserver', preset: '../../../jest.preset.js' };
