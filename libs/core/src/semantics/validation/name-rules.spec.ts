import {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isFullyQualifiedDomainName,
  isIANAServiceName,
  isLabelValue,
  isQualifiedName,
} from './name-rules.js';

// Cases follow apimachinery's validation_test.go (TestIsDNS1123Label & co.): the same accept/reject
// verdicts, including the hostile strings that reached the renderers before validation existed.
const HOSTILE = ['evil" -j ACCEPT\n-A INPUT -j ACCEPT\n#', 'x" -j ACCEPT #', 'nul\0byte', 'tab\tname', 'quote"open', 'new\nline', ' lead', 'trail '];

describe('isDNS1123Label', () => {
  it.each(['a', 'ab', 'abc', 'a1', 'a-1', 'a--1--2--b', '0', '01', '012', '1a', '1-a', '1--a--b--2', 'a'.repeat(63)])('accepts %j', (v) => {
    expect(isDNS1123Label(v)).toEqual([]);
  });
  it.each(['', 'A', 'ABC', 'aBc', 'A1', 'A-1', '1-A', '-', 'a-', '-a', '1-', '-1', '_', 'a_', '_a', 'a_b', '1_', '_1', '1_2', '.', 'a.', '.a', 'a.b', '1.', '.1', '1.2', ' ', 'a ', ' a', 'a b', '1 ', ' 1', '1 2', 'a'.repeat(64), ...HOSTILE])(
    'rejects %j',
    (v) => {
      expect(isDNS1123Label(v).length).toBeGreaterThan(0);
    },
  );
  it('says "must not contain dots" for a subdomain and names the 63-character limit', () => {
    expect(isDNS1123Label('a.b')).toEqual(['must not contain dots']);
    expect(isDNS1123Label('a'.repeat(64))).toEqual(['must be no more than 63 characters']);
  });
});

describe('isDNS1123Subdomain', () => {
  it.each(['a', 'a.b', 'a.b.c', '1.2.3', 'a-1.b-2', 'node-1.example.com', 'a'.repeat(253), `${'a'.repeat(63)}.${'b'.repeat(63)}`])('accepts %j', (v) => {
    expect(isDNS1123Subdomain(v)).toEqual([]);
  });
  it.each(['', 'A', 'a..b', '.a', 'a.', '-a.b', 'a-.b', 'a_b', 'a'.repeat(254), ...HOSTILE])('rejects %j', (v) => {
    expect(isDNS1123Subdomain(v).length).toBeGreaterThan(0);
  });
});

describe('isDNS1035Label (Service names)', () => {
  it.each(['a', 'ab', 'a1', 'a-1', 'a--1--2--b', 'kube-dns', 'a'.repeat(63)])('accepts %j', (v) => {
    expect(isDNS1035Label(v)).toEqual([]);
  });
  it.each(['', '0', '01', '1a', '1-a', 'A', 'a-', '-a', 'a.b', 'a_b', 'a'.repeat(64), ...HOSTILE])('rejects %j', (v) => {
    expect(isDNS1035Label(v).length).toBeGreaterThan(0);
  });
});

describe('isIANAServiceName (named target ports)', () => {
  it.each(['a', 'http', 'dns-tcp', 'a1', '1a', 'a-b-c', 'abcdefghijklmno'])('accepts %j', (v) => {
    expect(isIANAServiceName(v)).toEqual([]);
  });
  it.each(['', '80', '12-34', 'abcdefghijklmnop', 'a--b', '-a', 'a-', 'HTTP', 'a_b', 'a.b', ...HOSTILE])('rejects %j', (v) => {
    expect(isIANAServiceName(v).length).toBeGreaterThan(0);
  });
});

describe('isQualifiedName (label keys)', () => {
  it.each(['simple', 'now-with-dashes', '1-starts-with-num', '1234', 'simple/simple', 'now-with-dashes/simple', 'now-with-dashes/now-with-dashes', 'now.with.dots/simple', 'now-with.dashes-and.dots/simple', '1-num.2-num/3-num', '1234/5678', '1.2.3.4/5678', 'Uppercase_Is_OK_123', 'example.com/Uppercase_Is_OK_123', 'requests.storage-foo', 'kubernetes.io/service-name', 'a'.repeat(63), `${'a'.repeat(253)}/${'b'.repeat(63)}`])(
    'accepts %j',
    (v) => {
      expect(isQualifiedName(v)).toEqual([]);
    },
  );
  it.each(['', '/', 'nospecialchars%^=@', 'cantendwithadash-', '-cantstartwithadash-', 'only/one/slash', 'Example.com/abc', 'example_com/abc', 'example.com/', '/simple', 'a'.repeat(64), `${'a'.repeat(254)}/abc`, ...HOSTILE])(
    'rejects %j',
    (v) => {
      expect(isQualifiedName(v).length).toBeGreaterThan(0);
    },
  );
});

describe('isLabelValue', () => {
  it.each(['', 'simple', 'now-with-dashes', '1-starts-with-num', 'end-with-num-1', '1234', 'Uppercase_Is_OK_123', 'a.b', 'a'.repeat(63)])('accepts %j', (v) => {
    expect(isLabelValue(v)).toEqual([]);
  });
  it.each(['nospecialchars%^=@', 'Tama-nui-te-rā.is.Māori.sun', '\\backslashes\\are\\bad', '-starts-with-dash', 'ends-with-dash-', '.starts.with.dot', 'ends.with.dot.', 'a'.repeat(64), ...HOSTILE])(
    'rejects %j',
    (v) => {
      expect(isLabelValue(v).length).toBeGreaterThan(0);
    },
  );
});

describe('isFullyQualifiedDomainName (FQDN endpoint addresses)', () => {
  it.each(['a.com', 'k8s.io', 'example.com.', 'a.b.c.d', 'db-0.db.default.svc.cluster.local'])('accepts %j', (v) => {
    expect(isFullyQualifiedDomainName(v)).toEqual([]);
  });
  it.each(['', 'com', 'localhost', 'a..com', 'A.com', 'a_b.com', 'evil.com"\n-A INPUT'])('rejects %j', (v) => {
    expect(isFullyQualifiedDomainName(v).length).toBeGreaterThan(0);
  });
});

describe('linear time on hostile lengths', () => {
  it('checks a megabyte string quickly', () => {
    const huge = `${'a-'.repeat(500_000)}!`;
    const start = Date.now();
    for (const rule of [isDNS1123Label, isDNS1123Subdomain, isDNS1035Label, isQualifiedName, isLabelValue, isIANAServiceName]) {
      expect(rule(huge).length).toBeGreaterThan(0);
    }
    expect(Date.now() - start).toBeLessThan(2000);
  });
});
