package jail

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// A call granted network reaches it only through the supervisor's egress
// proxy. With a private network namespace (the namespace layer), init
// makes a listening socket on the namespace's loopback at
// NamespaceProxyPort and sends it to the supervisor, which accepts the
// call's connections from it: nothing else is routable from the namespace.
// Without one, the call is on the host's network, where Landlock (ABI 4)
// lets it connect to the proxy's port alone (StartOptions.ProxyPort) and
// bind nothing, and the seccomp filter allows only TCP sockets
// (filter.FilterOptions.TCPOnly) and refuses TCP Fast Open, whose implicit
// connect Landlock does not see.

// sendProxyListener makes the proxy's listening socket on the loopback of
// the call's network namespace and sends it to the supervisor. Init keeps
// no copy: only the supervisor accepts on it.
func sendProxyListener(sup *conn) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket for the proxy listener: %w", err)
	}
	defer unix.Close(fd)
	// An init that serves calls in turn binds the port again for each:
	// the last call's connections through it may linger in TIME_WAIT.
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return fmt.Errorf("SO_REUSEADDR on the proxy listener: %w", err)
	}
	sa := &unix.SockaddrInet4{Port: NamespaceProxyPort, Addr: [4]byte{127, 0, 0, 1}}
	if err := unix.Bind(fd, sa); err != nil {
		return fmt.Errorf("bind the proxy listener to 127.0.0.1:%d in the call's network namespace: %w", NamespaceProxyPort, err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		return fmt.Errorf("listen on the proxy listener: %w", err)
	}
	if err := sup.sendFD(message{Proxy: true}, fd); err != nil {
		return fmt.Errorf("send the proxy listener to the supervisor: %w", err)
	}
	return nil
}
