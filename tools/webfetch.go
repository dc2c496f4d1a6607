//go:build !brig_light_worker

package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"brig/policy/toolcall"
)

type fetchArgs struct {
	URL string `json:"url"`
}

func (a *fetchArgs) validate() error {
	_, err := parseFetchURL(a.URL)
	return err
}

// parseFetchURL accepts absolute http and https URLs with a host and no
// credentials.
func parseFetchURL(raw string) (*url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, errors.New("url is required")
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("not a URL: %v", err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return nil, fmt.Errorf("%q has no scheme; give a full http:// or https:// URL", raw)
	default:
		return nil, fmt.Errorf("web_fetch fetches http and https URLs only, not %s:", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("%q names no host", raw)
	}
	if u.User != nil {
		return nil, errors.New("URLs with a user name or password are refused (credentials never go into a fetch)")
	}
	return u, nil
}

func webFetchDef() Definition {
	return define(WebFetch, toolcall.EffectNetwork,
		fmt.Sprintf("Fetch an http or https URL and return its content: HTML as Markdown, text and JSON as they are, images as images. The host must be allowed by the user (a redirect to another host is not followed: you are told where it points). At most %d KiB of text is returned.", MaxFetchTextBytes>>10),
		`{"type":"object","properties":{"url":{"type":"string","description":"Absolute http:// or https:// URL"}},"required":["url"],"additionalProperties":false}`,
		func(a fetchArgs) toolcall.Call {
			u, _ := parseFetchURL(a.URL)
			return toolcall.Call{Host: strings.ToLower(u.Hostname())}
		},
		fetchURL)
}

// RedirectArgs returns web_fetch arguments for the URL a redirect points
// at, for the executor to decide and run as a new call.
func RedirectArgs(args json.RawMessage, to string) (json.RawMessage, error) {
	a, err := decodeArgs[fetchArgs](args)
	if err != nil {
		return nil, err
	}
	a.URL = to
	return json.Marshal(a)
}
