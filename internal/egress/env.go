package egress

import (
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// NoProxy is what a call's clients reach without the proxy: its own
// loopback (test servers of its own, inside its network namespace).
const NoProxy = "localhost,127.0.0.1,::1"

// ClientEnv returns env with the variables that point the usual clients at
// the proxy listening on 127.0.0.1:port, replacing any of the same name:
// the conventional HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY (and
// their lower-case forms, which curl and git read), npm's, yarn's, pip's
// and cargo's own settings, git's http.proxy (as GIT_CONFIG_* entries),
// and the JVM's proxy properties for Maven and Gradle (appended to
// MAVEN_OPTS and GRADLE_OPTS). token, when set, is the password the proxy
// wants (any user name); it rides in the URLs.
//
// Go (GOPROXY and direct fetches), Node, Python, Ruby, Deno and Bun read
// the conventional variables.
func ClientEnv(env []string, port int, token string) []string {
	hostport := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	httpURL := url.URL{Scheme: "http", Host: hostport}
	socksURL := url.URL{Scheme: "socks5h", Host: hostport} // h: names resolved by the proxy
	if token != "" {
		httpURL.User = url.UserPassword("brig", token)
		socksURL.User = url.UserPassword("brig", token)
	}
	h, s := httpURL.String(), socksURL.String()
	set := map[string]string{
		"HTTP_PROXY": h, "HTTPS_PROXY": h, "http_proxy": h, "https_proxy": h,
		"ALL_PROXY": s, "all_proxy": s,
		"NO_PROXY": NoProxy, "no_proxy": NoProxy,
		"npm_config_proxy": h, "npm_config_https_proxy": h, "npm_config_noproxy": NoProxy,
		"YARN_HTTP_PROXY": h, "YARN_HTTPS_PROXY": h,
		"PIP_PROXY":        h,
		"CARGO_HTTP_PROXY": h,
		"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "http.proxy", "GIT_CONFIG_VALUE_0": h,
	}
	jvm := "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=" + strconv.Itoa(port) +
		" -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=" + strconv.Itoa(port) +
		" -Dhttp.nonProxyHosts=localhost|127.0.0.1"
	appendTo := map[string]string{"MAVEN_OPTS": jvm, "GRADLE_OPTS": jvm}

	var out []string
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		if _, ok := set[name]; ok || strings.HasPrefix(name, "GIT_CONFIG_") {
			continue // replaced below (a git config entry would shift the numbering)
		}
		if add, ok := appendTo[name]; ok {
			if val != "" {
				add = val + " " + add
			}
			appendTo[name] = add
			continue
		}
		out = append(out, kv)
	}
	for _, name := range slices.Sorted(maps.Keys(set)) {
		out = append(out, name+"="+set[name])
	}
	for _, name := range slices.Sorted(maps.Keys(appendTo)) {
		out = append(out, name+"="+appendTo[name])
	}
	return out
}
