package tools

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

// ErrAddressRefused is wrapped by the errors of DialPolicy.
var ErrAddressRefused = errors.New("address refused")

// DialPolicy decides which IP addresses an outgoing connection made for a
// model may reach. By default only public unicast addresses: loopback,
// private (RFC 1918, fc00::/7), link-local (169.254/16, fe80::/10, where
// cloud metadata services live), carrier-grade NAT and other special ranges
// are refused; unspecified, multicast and broadcast addresses always are.
//
// Use Control as a net.Dialer's Control function: it runs on the address
// actually dialled, after name resolution and before the connection is
// attempted, so a host name that resolves (or is re-bound, DNS rebinding) to
// a forbidden address is refused too, and no packet is sent to it.
type DialPolicy struct {
	AllowLoopback bool // 127.0.0.0/8, ::1
	AllowPrivate  bool // private, link-local, CGNAT, NAT64 and reserved ranges
}

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
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: may embed a private IPv4
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("2002::/16"),       // 6to4: may embed a private IPv4
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
}

var thisNetwork = netip.MustParsePrefix("0.0.0.0/8") // "this host on this network": reaches localhost on Linux

// Check returns nil when ip may be dialled, or an error wrapping
// ErrAddressRefused that says why not.
func (p DialPolicy) Check(ip netip.Addr) error {
	a := ip.Unmap().WithZone("")
	refuse := func(what string) error {
		return fmt.Errorf("%w: %s is a %s address", ErrAddressRefused, a, what)
	}
	switch {
	case !a.IsValid():
		return fmt.Errorf("%w: invalid address", ErrAddressRefused)
	case a.IsUnspecified() || thisNetwork.Contains(a):
		return refuse("unspecified")
	case a.IsMulticast():
		return refuse("multicast")
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return refuse("broadcast")
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

// Control checks the address a net.Dialer is about to connect to (see
// DialPolicy). Its signature is net.Dialer.Control's.
func (p DialPolicy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse dial address %q: %v", ErrAddressRefused, address, err)
	}
	return p.Check(ap.Addr())
}
