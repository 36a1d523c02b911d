module.exports = { displayName: 'backend-iptables', preset: '../../jest.preset.js' };
