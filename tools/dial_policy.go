package tools

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"syscall"
)

// ErrAddressRefused is wrapped by the errors of DialPolicy.
var ErrAddressRefused = errors.New("address refused")

// DialPolicy decides which IP addresses an outgoing connection made for a
// model may reach. By default only public unicast addresses: loopback,
// private (RFC 1918, fc00::/7), link-local (169.254/16, fe80::/10, where
// cloud metadata services live), carrier-grade NAT and other special ranges
// are refused; unspecified, multicast and broadcast addresses always are.
// Allow names ranges let through anyway (an operator's --webhook-allow).
//
// An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4
// address it carries: that is where a connection to it goes.
//
// Use Control as a net.Dialer's Control function: it runs on the address
// actually dialled, after name resolution and before the connection is
// attempted, so a host name that resolves (or is re-bound, DNS rebinding) to
// a forbidden address is refused too, and no packet is sent to it.
type DialPolicy struct {
	AllowLoopback bool // 127.0.0.0/8, ::1
	AllowPrivate  bool // private, link-local, CGNAT, NAT64 and reserved ranges
	// Allow lets addresses in these prefixes through whatever range they
	// are in (ParseAllowList reads them from a flag). IPv4 prefixes also
	// match the IPv4-mapped IPv6 form of their addresses.
	Allow []netip.Prefix
}

// OpenDialPolicy lets every unicast address through: what a server that
// nobody else can reach uses. Unspecified, multicast and broadcast
// addresses stay refused (0.0.0.0 reaches the local host on Linux).
func OpenDialPolicy() DialPolicy { return DialPolicy{AllowLoopback: true, AllowPrivate: true} }

// AddressRefusedError is DialPolicy's refusal of one address. Its text
// holds the address: it is for the server log, not for callers or models.
type AddressRefusedError struct {
	Addr  netip.Addr
	Range string // "loopback", "private", "link-local", "multicast", …
}

func (e *AddressRefusedError) Error() string {
	return fmt.Sprintf("%v: %s is %s", ErrAddressRefused, e.Addr, e.kind())
}

// kind is "a loopback address", "an unspecified address", ….
func (e *AddressRefusedError) kind() string {
	if e.Range != "" && strings.ContainsAny(e.Range[:1], "aeiou") {
		return "an " + e.Range + " address"
	}
	return "a " + e.Range + " address"
}

func (e *AddressRefusedError) Unwrap() error { return ErrAddressRefused }

// Special-purpose ranges refused unless AllowPrivate (besides what
// netip.Addr's IsPrivate and IsLinkLocalUnicast cover).
var specialPrefixes = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated): may embed a private IPv4
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: may embed a private IPv4
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("2002::/16"),       // 6to4: may embed a private IPv4
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
}

var thisNetwork = netip.MustParsePrefix("0.0.0.0/8") // "this host on this network": reaches localhost on Linux

// Check returns nil when ip may be dialled, or an *AddressRefusedError
// (wrapping ErrAddressRefused) that says why not.
func (p DialPolicy) Check(ip netip.Addr) error {
	a := ip.Unmap().WithZone("")
	refuse := func(what string) error { return &AddressRefusedError{Addr: a, Range: what} }
	switch {
	case !a.IsValid():
		return fmt.Errorf("%w: invalid address", ErrAddressRefused)
	case a.IsUnspecified() || thisNetwork.Contains(a):
		return refuse("unspecified")
	case a.IsMulticast():
		return refuse("multicast")
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return refuse("broadcast")
	case p.allowed(a):
		return nil
	case a.IsLoopback():
		if !p.AllowLoopback {
			return refuse("loopback")
		}
		return nil
	case a.IsPrivate():
		if !p.AllowPrivate {
			return refuse("private")
		}
	case a.IsLinkLocalUnicast():
		if !p.AllowPrivate {
			return refuse("link-local")
		}
	}
	if !p.AllowPrivate {
		for _, pre := range specialPrefixes {
			if pre.Contains(a) {
				return refuse("special-purpose (" + pre.String() + ")")
			}
		}
	}
	return nil
}

// allowed reports whether a (unmapped, without zone) is in p.Allow.
func (p DialPolicy) allowed(a netip.Addr) bool {
	for _, pre := range p.Allow {
		if unmapPrefix(pre).Contains(a) {
			return true
		}
	}
	return false
}

// unmapPrefix turns an IPv4-mapped prefix (::ffff:10.0.0.0/104) into its
// IPv4 form (10.0.0.0/8), the form Check compares unmapped addresses with.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}

// Control checks the address a net.Dialer is about to connect to (see
// DialPolicy). Its signature is net.Dialer.Control's.
func (p DialPolicy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse dial address %q: %v", ErrAddressRefused, address, err)
	}
	return p.Check(ap.Addr())
}

// ParseAllowList reads the value of an allow-list flag such as
// --webhook-allow: CIDR prefixes or bare IP addresses (a /32 or /128),
// separated by commas, e.g. "10.0.0.0/8,127.0.0.2,fd00::/8". An empty value
// is an empty list. A bad entry is a one-line error naming it and the
// accepted form.
func ParseAllowList(value string) ([]netip.Prefix, error) {
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	var out []netip.Prefix
	for entry := range strings.SplitSeq(value, ",") {
		pre, err := parseAllowEntry(strings.TrimSpace(entry))
		if err != nil {
			return nil, err
		}
		out = append(out, pre)
	}
	return out, nil
}

const allowForm = "want an IP address or CIDR prefix such as 10.0.0.0/8, 127.0.0.2 or fd00::/8, comma-separated"

func parseAllowEntry(s string) (netip.Prefix, error) {
	if s == "" {
		return netip.Prefix{}, fmt.Errorf("allow list has an empty entry: %s", allowForm)
	}
	if strings.Contains(s, "%") {
		return netip.Prefix{}, fmt.Errorf("allow list entry %q has an IPv6 zone: %s", s, allowForm)
	}
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("allow list entry %q is not an IP address: %s", s, allowForm)
		}
		return unmapPrefix(netip.PrefixFrom(a, a.BitLen())), nil
	}
	pre, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("allow list entry %q is not a CIDR prefix: %s", s, allowForm)
	}
	if m := pre.Masked(); m != pre {
		return netip.Prefix{}, fmt.Errorf("allow list entry %q has bits set past the prefix length (did you mean %s?): %s", s, m, allowForm)
	}
	return unmapPrefix(pre), nil
}
