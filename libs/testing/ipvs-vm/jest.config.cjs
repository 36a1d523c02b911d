module.exports = { displayName: 'testing-ipvs-vm', preset: '../../../jest.preset.js' };
