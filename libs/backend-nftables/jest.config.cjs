module.exports = { displayName: 'backend-nftables', preset: '../../jest.preset.js' };
