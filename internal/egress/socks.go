package egress

import (
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"syscall"
	"time"

	"brig/jail"
)

// SOCKS5 (RFC 1928), CONNECT only, with no authentication or, when the
// session has a token, user name and password (RFC 1929).
const (
	socksVersion  = 5
	socksNoAuth   = 0x00
	socksUserPass = 0x02
	socksNoMethod = 0xff
	socksConnect  = 1

	socksOK              = 0x00
	socksFailure         = 0x01
	socksNotAllowed      = 0x02
	socksHostUnreachable = 0x04
	socksRefused         = 0x05
	socksCmdUnsupported  = 0x07
	socksAddrUnsupported = 0x08
)

// socks serves one SOCKS5 connection (its first byte, 5, is still unread).
func (s *Session) socks(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(s.p.o.HandshakeTimeout))
	rec := jail.Connection{Via: "SOCKS5", Start: time.Now()}
	fail := func(why string) {
		rec.Refused = why
		s.record(rec)
	}
	var hdr [2]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return
	}
	want := byte(socksNoAuth)
	if s.o.Token != "" {
		want = socksUserPass
	}
	if !containsByte(methods, want) {
		_, _ = c.Write([]byte{socksVersion, socksNoMethod})
		if want == socksUserPass {
			fail("the SOCKS5 client offered no user name and password (give those of the proxy URL in this call's environment)")
		}
		return
	}
	if _, err := c.Write([]byte{socksVersion, want}); err != nil {
		return
	}
	if want == socksUserPass && !s.socksAuth(c) {
		fail("wrong SOCKS5 password")
		return
	}

	var req [4]byte // VER CMD RSV ATYP
	if _, err := io.ReadFull(c, req[:]); err != nil {
		return
	}
	host, err := readSocksAddr(c, req[3])
	if err != nil {
		reply(c, socksAddrUnsupported)
		fail(err.Error())
		return
	}
	var pb [2]byte
	if _, err := io.ReadFull(c, pb[:]); err != nil {
		return
	}
	rec.Host, rec.Port = shownHost(host), int(binary.BigEndian.Uint16(pb[:]))
	if req[1] != socksConnect {
		reply(c, socksCmdUnsupported)
		fail(fmt.Sprintf("SOCKS5 command %d is not supported (only CONNECT: no UDP, no listening)", req[1]))
		return
	}
	_ = c.SetDeadline(time.Time{}) // a decision may take a while (the user is asked)
	v, err := s.decide(s.ctx, Request{Host: host, Port: rec.Port, Via: "SOCKS5"})
	rec.Rule = v.Rule
	if err != nil {
		reply(c, socksNotAllowed)
		fail(err.Error())
		return
	}
	up, ap, err := s.dial(s.ctx, rec.Host, rec.Port, v.Named)
	if err != nil {
		code := byte(socksHostUnreachable)
		var rf *refusal
		if errors.As(err, &rf) {
			code = socksNotAllowed
		} else if errors.Is(err, syscall.ECONNREFUSED) {
			code = socksRefused
		}
		rec.Unreachable = code != socksNotAllowed
		reply(c, code)
		fail(err.Error())
		return
	}
	rec.Addr = ap.String()
	sent, release, ok := s.trackUp(up)
	if !ok {
		return
	}
	defer release()
	if err := reply(c, socksOK); err != nil {
		_ = up.Close()
		fail("the client went away")
		return
	}
	s.tunnel(c, up, &rec, sent)
	s.record(rec)
}

// socksAuth reads an RFC 1929 request and checks the password against the
// session's token (any user name).
func (s *Session) socksAuth(c net.Conn) bool {
	var b [2]byte
	if _, err := io.ReadFull(c, b[:]); err != nil || b[0] != 1 {
		return false
	}
	user := make([]byte, b[1])
	if _, err := io.ReadFull(c, user); err != nil {
		return false
	}
	if _, err := io.ReadFull(c, b[:1]); err != nil {
		return false
	}
	pass := make([]byte, b[0])
	if _, err := io.ReadFull(c, pass); err != nil {
		return false
	}
	ok := subtle.ConstantTimeCompare(pass, []byte(s.o.Token)) == 1
	status := byte(1)
	if ok {
		status = 0
	}
	_, _ = c.Write([]byte{1, status})
	return ok
}

// readSocksAddr reads DST.ADDR of type atyp.
func readSocksAddr(r io.Reader, atyp byte) (string, error) {
	switch atyp {
	case 1:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return "", err
		}
		return netip.AddrFrom4(b).String(), nil
	case 4:
		var b [16]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return "", err
		}
		return netip.AddrFrom16(b).Unmap().String(), nil
	case 3:
		var n [1]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return "", err
		}
		b := make([]byte, n[0])
		if _, err := io.ReadFull(r, b); err != nil {
			return "", err
		}
		return string(b), nil
	}
	return "", fmt.Errorf("SOCKS5 address type %d is not supported", atyp)
}

// reply sends a SOCKS5 reply with an empty bound address.
func reply(c net.Conn, code byte) error {
	_, err := c.Write([]byte{socksVersion, code, 0, 1, 0, 0, 0, 0, 0, 0})
	return err
}

func containsByte(b []byte, x byte) bool {
	for _, y := range b {
		if y == x {
			return true
		}
	}
	return false
}
