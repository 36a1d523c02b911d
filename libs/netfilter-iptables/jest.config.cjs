module.exports = { displayName: 'netfilter-iptables', preset: '../../jest.preset.js' };
