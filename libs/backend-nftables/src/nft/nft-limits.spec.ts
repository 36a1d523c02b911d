import { COMMENT_BYTES_MAX, nftCommentText, truncateUtf8, utf8Length } from './nft-limits.js';
import { elementBody, quoted, ruleText } from './nft-objects.js';

describe('nft length limits', () => {
  it('keeps text that fits as it is', () => {
    const fits = 'x'.repeat(COMMENT_BYTES_MAX);
    expect(nftCommentText(fits)).toBe(fits);
    expect(nftCommentText('default/kubernetes:https')).toBe('default/kubernetes:https');
  });

  it('cuts the longest valid service port name to 128 bytes, as upstream does', () => {
    const name = `${'n'.repeat(63)}/${'s'.repeat(63)}:${'p'.repeat(15)}`;
    expect(name).toHaveLength(143);
    expect(nftCommentText(name)).toBe(name.slice(0, 128));
  });

  // Upstream's TestTruncateNFTablesComment vectors (proxier_test.go at kubernetes edca5633).
  it.each([
    ['short comment unchanged', 'kube-system/kube-dns:dns', 'kube-system/kube-dns:dns'],
    ['exactly max length unchanged', 'a'.repeat(128), 'a'.repeat(128)],
    ['too long gets truncated', 'a'.repeat(129), 'a'.repeat(128)],
    [
      'realistic long service name truncated',
      'loft-acme-platform-services-team-dev-v-shared-workloads-ns-001/my-api-svc-x-my-api-namespace-x-acme-shared-vcluster--a1b2c3d4e:http',
      'loft-acme-platform-services-team-dev-v-shared-workloads-ns-001/my-api-svc-x-my-api-namespace-x-acme-shared-vcluster--a1b2c3d4e:h',
    ],
  ])('upstream: %s', (_name, input, want) => {
    expect(nftCommentText(input)).toBe(want);
    expect(utf8Length(nftCommentText(input))).toBeLessThanOrEqual(COMMENT_BYTES_MAX);
  });

  it('counts bytes, not UTF-16 units, and never splits a character', () => {
    // 127 ASCII bytes + "é" (2 bytes) is 128 characters but 129 bytes: nft refuses it.
    const text = 'a'.repeat(127) + 'é';
    expect(text).toHaveLength(128);
    expect(nftCommentText(text)).toBe('a'.repeat(127));
    // Emoji are 4 bytes (2 UTF-16 units): 32 of them fill 128 bytes exactly, a 33rd is dropped whole.
    const emoji = '🚀'.repeat(33);
    expect(nftCommentText(emoji)).toBe('🚀'.repeat(32));
    expect(utf8Length(nftCommentText(emoji))).toBe(128);
    // A 3-byte character that would straddle the limit is left out, not cut.
    expect(truncateUtf8('ab名', 4)).toBe('ab');
    expect(truncateUtf8('ab名', 5)).toBe('ab名');
    // A lone surrogate is written as U+FFFD (3 bytes).
    expect(truncateUtf8('a\uD800', 3)).toBe('a');
  });

  it('cuts every comment where it is quoted: elements, rules, declarations', () => {
    const long = 'c'.repeat(300);
    expect(quoted(long)).toBe(`"${'c'.repeat(128)}"`);
    expect(elementBody({ key: '10.0.0.1 . tcp . 80', value: 'drop', comment: long })).toBe(`10.0.0.1 . tcp . 80 comment "${'c'.repeat(128)}" : drop`);
    expect(ruleText('drop', long)).toBe(`drop comment "${'c'.repeat(128)}"`);
  });
});
