package tools

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// HostRefusedError is the registration-time refusal of a URL host that is
// a number but not an address in canonical form. Its text holds the host:
// it is for the server log and for the one who wrote the URL.
type HostRefusedError struct {
	Host   string
	Reason string
}

func (e *HostRefusedError) Error() string {
	return fmt.Sprintf("%v: host %q is %s", ErrAddressRefused, e.Host, e.Reason)
}

func (e *HostRefusedError) Unwrap() error { return ErrAddressRefused }

// Reasons of HostRefusedError.
const (
	reasonLegacyIPv4 = "an IPv4 address in a non-canonical form (decimal, hex, octal or shortened), " +
		"which resolvers read differently: write it as four decimal numbers (a.b.c.d)"
	reasonNumericHost = "made of numbers but is not an IPv4 address"
)

// CheckHost is the check made when a URL is registered, before any
// connection: host (a URL's Hostname(), brackets removed) may be dialled
// as far as it can be told without resolving it. An IP address in
// canonical form is judged by Check. A host that is a number in any other
// form (2130706433, 0x7f000001, 0177.0.0.1, 127.1, 127.0.0.1.) is refused
// whatever the policy: Go's resolver reads these as names (not found, or
// looked up in DNS), glibc's getaddrinfo as inet_aton does (127.0.0.1), so
// which address they reach depends on the build and the machine. A name is
// accepted: its addresses are judged at dial time (Control), the check that
// holds whatever this one lets through.
func (p DialPolicy) CheckHost(host string) error {
	if a, err := netip.ParseAddr(host); err == nil {
		return p.Check(a)
	}
	if !numericHost(host) {
		return nil
	}
	if _, ok := parseInetAton(host); ok {
		return &HostRefusedError{Host: host, Reason: reasonLegacyIPv4}
	}
	return &HostRefusedError{Host: host, Reason: reasonNumericHost}
}

// numericHost reports whether every dot-separated label of host is a
// number (decimal, or hex with 0x), a trailing dot allowed: a host no DNS
// name can be (RFC 1123 §2.1: a top-level label is never all-numeric) and
// that some resolvers read as an IPv4 address.
func numericHost(host string) bool {
	for l := range strings.SplitSeq(strings.TrimSuffix(host, "."), ".") {
		if !numericLabel(l) {
			return false
		}
	}
	return true
}

// numericLabel reports whether l is decimal digits, or 0x and hex digits.
func numericLabel(l string) bool {
	if hexPrefixed(l) {
		return strings.Trim(l[2:], "0123456789abcdefABCDEF") == ""
	}
	return l != "" && strings.Trim(l, "0123456789") == ""
}

func hexPrefixed(s string) bool {
	return len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
}

// parseInetAton reads s the way inet_aton(3) does: one to four parts
// separated by dots, each decimal, octal (leading 0) or hex (leading 0x);
// the last part fills the bytes the others leave (127.1 is 127.0.0.1,
// 2130706433 is 127.0.0.1).
func parseInetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var ip uint32
	for i, p := range parts {
		v, ok := atonPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if v > 0xff {
				return netip.Addr{}, false
			}
			ip |= uint32(v) << (24 - 8*i)
			continue
		}
		if v > uint64(1)<<(8*(5-len(parts)))-1 {
			return netip.Addr{}, false
		}
		ip |= uint32(v)
	}
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}

// atonPart reads one part of an inet_aton address.
func atonPart(p string) (uint64, bool) {
	base, digits := 10, p
	switch {
	case hexPrefixed(p):
		base, digits = 16, p[2:]
	case len(p) > 1 && p[0] == '0':
		base, digits = 8, p[1:]
	}
	if digits == "" || strings.ContainsAny(digits, "+-_") {
		return 0, false
	}
	v, err := strconv.ParseUint(digits, base, 32)
	return v, err == nil
}
