package tools

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestDialPolicyAllowList(t *testing.T) {
	allow, err := ParseAllowList("127.0.0.2, 10.0.0.0/8,fd00::/8,::ffff:169.254.0.0/112")
	if err != nil {
		t.Fatal(err)
	}
	p := DialPolicy{Allow: allow}
	for _, s := range []string{"127.0.0.2", "::ffff:127.0.0.2", "10.1.2.3", "::ffff:10.9.9.9", "fd00::5", "169.254.169.254", "8.8.8.8"} {
		if err := p.Check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("%s refused despite the allow list: %v", s, err)
		}
	}
	for _, s := range []string{"127.0.0.1", "127.0.0.3", "::1", "192.168.1.1", "fe80::1", "fc00::1", "100.64.0.1"} {
		if err := p.Check(netip.MustParseAddr(s)); !errors.Is(err, ErrAddressRefused) {
			t.Errorf("%s allowed outside the allow list", s)
		}
	}
	// Even an allow list of everything refuses the addresses that never
	// name one remote host.
	all := DialPolicy{Allow: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}}
	for _, s := range []string{"0.0.0.0", "0.1.2.3", "::", "224.0.0.1", "ff02::1", "255.255.255.255", "::ffff:0.0.0.0"} {
		if err := all.Check(netip.MustParseAddr(s)); !errors.Is(err, ErrAddressRefused) {
			t.Errorf("%s allowed by an allow list", s)
		}
	}
	if err := all.Check(netip.MustParseAddr("127.0.0.1")); err != nil {
		t.Errorf("0.0.0.0/0 does not allow loopback: %v", err)
	}
}

// An IPv4-mapped IPv6 address is judged as the IPv4 address it carries,
// with the same refusal.
func TestDialPolicyMappedAddresses(t *testing.T) {
	var def DialPolicy
	for mapped, v4 := range map[string]string{
		"::ffff:127.0.0.1":         "127.0.0.1",
		"::ffff:7f00:1":            "127.0.0.1",
		"0:0:0:0:0:ffff:7f00:0001": "127.0.0.1",
		"::ffff:10.0.0.1":          "10.0.0.1",
		"::ffff:192.168.1.1":       "192.168.1.1",
		"::ffff:169.254.169.254":   "169.254.169.254",
		"::ffff:100.64.0.1":        "100.64.0.1",
	} {
		var got, want *AddressRefusedError
		if !errors.As(def.Check(netip.MustParseAddr(mapped)), &got) || !errors.As(def.Check(netip.MustParseAddr(v4)), &want) {
			t.Errorf("%s or %s not refused", mapped, v4)
			continue
		}
		if *got != *want {
			t.Errorf("%s refused as %+v, %s as %+v", mapped, got, v4, want)
		}
	}
	if err := def.Check(netip.MustParseAddr("::ffff:8.8.8.8")); err != nil {
		t.Errorf("mapped public address refused: %v", err)
	}
	// IPv4-compatible (deprecated) addresses carry an IPv4 address too.
	if err := def.Check(netip.MustParseAddr("::127.0.0.1")); !errors.Is(err, ErrAddressRefused) {
		t.Error("::127.0.0.1 allowed")
	}
	if err := (DialPolicy{AllowLoopback: true}).Check(netip.MustParseAddr("::ffff:127.0.0.1")); err != nil {
		t.Errorf("AllowLoopback refused mapped loopback: %v", err)
	}
	var e *AddressRefusedError
	if !errors.As(def.Check(netip.MustParseAddr("::")), &e) || !strings.Contains(e.Error(), "is an unspecified address") {
		t.Errorf("refusal text %v", e)
	}
}

func TestParseAllowList(t *testing.T) {
	for value, want := range map[string]string{
		"":                              "",
		"  ":                            "",
		"127.0.0.2":                     "127.0.0.2/32",
		"::1":                           "::1/128",
		"10.0.0.0/8, 192.168.0.0/16":    "10.0.0.0/8,192.168.0.0/16",
		"fd00::/8":                      "fd00::/8",
		"::ffff:127.0.0.2":              "127.0.0.2/32",
		"::ffff:10.0.0.0/104,127.0.0.3": "10.0.0.0/8,127.0.0.3/32",
	} {
		got, err := ParseAllowList(value)
		if err != nil {
			t.Errorf("%q: %v", value, err)
			continue
		}
		var s []string
		for _, p := range got {
			s = append(s, p.String())
		}
		if strings.Join(s, ",") != want {
			t.Errorf("%q = %v, want %s", value, s, want)
		}
	}
	for value, bad := range map[string]string{
		"10.0.0.0/33":          `"10.0.0.0/33" is not a CIDR prefix`,
		"localhost":            `"localhost" is not an IP address`,
		"10.0.0.1/8":           `"10.0.0.1/8" has bits set past the prefix length (did you mean 10.0.0.0/8?)`,
		"10.0.0.0/8,,::1":      "empty entry",
		"10.0.0.0/8,":          "empty entry",
		"2130706433":           `"2130706433" is not an IP address`,
		"fe80::1%eth0":         `"fe80::1%eth0" has an IPv6 zone`,
		"127.0.0.1, 300.0.0.1": `"300.0.0.1" is not an IP address`,
	} {
		_, err := ParseAllowList(value)
		if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "want an IP address or CIDR prefix such as") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want a one-line error containing %q and the allowed form", value, err, bad)
		}
	}
}

// CheckHost, the registration-time check, refuses canonical IP literals the
// policy refuses and numeric hosts in every other form whatever the
// policy; names wait for the dial-time check.
func TestCheckHost(t *testing.T) {
	strict, open := DialPolicy{}, OpenDialPolicy()
	for _, c := range []struct {
		host         string
		strict, open bool // refused
		aton         string
	}{
		{host: "127.0.0.1", strict: true},
		{host: "::1", strict: true},
		{host: "::ffff:127.0.0.1", strict: true},
		{host: "::ffff:7f00:1", strict: true},
		{host: "169.254.169.254", strict: true},
		{host: "10.0.0.1", strict: true},
		{host: "fe80::1%eth0", strict: true},
		{host: "0.0.0.0", strict: true, open: true},
		{host: "224.0.0.1", strict: true, open: true},
		{host: "2130706433", strict: true, open: true, aton: "127.0.0.1"},
		{host: "0x7f000001", strict: true, open: true, aton: "127.0.0.1"},
		{host: "0X7F000001", strict: true, open: true, aton: "127.0.0.1"},
		{host: "0177.0.0.1", strict: true, open: true, aton: "127.0.0.1"},
		{host: "017700000001", strict: true, open: true, aton: "127.0.0.1"},
		{host: "127.1", strict: true, open: true, aton: "127.0.0.1"},
		{host: "127.0.1", strict: true, open: true, aton: "127.0.0.1"},
		{host: "0x7f.1", strict: true, open: true, aton: "127.0.0.1"},
		{host: "0xa9.0xfe.0xa9.0xfe", strict: true, open: true, aton: "169.254.169.254"},
		{host: "2852039166", strict: true, open: true, aton: "169.254.169.254"},
		{host: "167772161", strict: true, open: true, aton: "10.0.0.1"},
		{host: "010.0.0.1", strict: true, open: true, aton: "8.0.0.1"},
		{host: "134744072", strict: true, open: true, aton: "8.8.8.8"},
		{host: "127.0.0.1.", strict: true, open: true},
		{host: "4294967296", strict: true, open: true},
		{host: "1.2.3.4.5", strict: true, open: true},
		{host: "08.0.0.1", strict: true, open: true},
		{host: "0x", strict: true, open: true},
		{host: "8.8.8.8"},
		{host: "2606:4700::1111"},
		{host: "localhost"},
		{host: "example.com"},
		{host: "0x7f.example.com"},
		{host: "1.2.3.4.example"},
		{host: "0xcafe-tools"},
	} {
		if err := strict.CheckHost(c.host); (err != nil) != c.strict || (err != nil && !errors.Is(err, ErrAddressRefused)) {
			t.Errorf("strict CheckHost(%q) = %v, refused want %v", c.host, err, c.strict)
		}
		if err := open.CheckHost(c.host); (err != nil) != c.open {
			t.Errorf("open CheckHost(%q) = %v, refused want %v", c.host, err, c.open)
		}
		if c.aton != "" {
			if a, ok := parseInetAton(c.host); !ok || a.String() != c.aton {
				t.Errorf("parseInetAton(%q) = %v %v, want %s", c.host, a, ok, c.aton)
			}
		}
	}
}
