package egress

import (
	"errors"
	"net"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

// nonPublic are the address ranges a call reaches only through a rule that
// names the host: what is on the machine, on its networks or reserved.
var nonPublic = []struct {
	p    netip.Prefix
	kind string
}{
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (cloud metadata services live there)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("0.0.0.0/8"), "reserved (this network)"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved (IETF protocol assignments)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved (documentation)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved (documentation)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved (documentation)"},
	{netip.MustParsePrefix("2001:db8::/32"), "reserved (documentation)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved (benchmarking)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	{netip.MustParsePrefix("100::/64"), "reserved (discard)"},
}

// embedsIPv4 are IPv6 ranges whose last (or, for 6to4, second to fifth)
// bytes carry an IPv4 address that decides where the packet goes.
var embedsIPv4 = []struct {
	p   netip.Prefix
	off int
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12},   // NAT64
	{netip.MustParsePrefix("64:ff9b:1::/48"), 12}, // local-use NAT64
	{netip.MustParsePrefix("::/96"), 12},          // IPv4-compatible (deprecated)
	{netip.MustParsePrefix("2002::/16"), 2},       // 6to4
}

// internal names the kind of a non-public address, "" for a public one.
// IPv4-mapped addresses are judged as the IPv4 address they map, and IPv6
// forms that carry an IPv4 address as that address.
func internal(a netip.Addr) string {
	a = a.Unmap()
	for _, e := range embedsIPv4 {
		if a.Is6() && e.p.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback() {
			b := a.As16()
			v4 := netip.AddrFrom4([4]byte(b[e.off : e.off+4]))
			if k := internal(v4); k != "" {
				return k + " (inside an IPv6 address)"
			}
		}
	}
	for _, r := range nonPublic {
		if r.p.Contains(a) {
			return r.kind
		}
	}
	return ""
}

// Internal reports whether a is an address a call reaches only through a
// rule naming its host (loopback, link-local, private, unique-local,
// reserved), and which kind; for callers that explain decisions.
func Internal(a netip.Addr) (string, bool) {
	k := internal(a)
	return k, k != ""
}

// peekByte reads the first byte of c without consuming it, honouring c's
// read deadline.
func peekByte(c net.Conn) (byte, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, errors.New("not a socket")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var b [1]byte
	var n int
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr = unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK)
		return rerr != unix.EAGAIN
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, rerr
	case n == 0:
		return 0, errors.New("closed before the first byte")
	}
	return b[0], nil
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// unwrapDNS shortens a resolver error to what it says.
func unwrapDNS(err error) error {
	var de *net.DNSError
	if errors.As(err, &de) {
		if de.IsNotFound {
			return errors.New("no such host")
		}
		return errors.New(de.Err)
	}
	return err
}
