//go:build !brig_light_worker && !brig_carrier

package tools

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html/charset"
)

// The fetch itself, run by the jail worker. brig's own binary, built by
// internal/build/build.sh with the brig_carrier tag, leaves it out (see
// webfetch_carrier.go): it runs web_fetch in the worker it carries, and
// the HTML converter's and character sets' packages cost every start of
// brig their initialisation.

// fetchURL runs inside a jail whose only way out is brig's egress proxy,
// which lets it reach the one host the call was approved for, and with no
// filesystem rights beyond the TLS roots. Every request goes through the
// proxy (named in the jail's environment), localhost included: the host
// resolves names, not the jail. It makes one request and never follows a
// redirect itself: the supervisor's policy decides every hop.
func fetchURL(ctx context.Context, a fetchArgs) Result {
	u, err := parseFetchURL(a.URL)
	if err != nil {
		return errorf("web_fetch: %v", err)
	}
	proxy, err := url.Parse(cmp.Or(os.Getenv("HTTPS_PROXY"), os.Getenv("HTTP_PROXY")))
	if err != nil || proxy.Host == "" {
		return errorf("web_fetch: this jail has no network proxy (HTTPS_PROXY), so it cannot reach %s", u.Host)
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	tr := &http.Transport{
		Proxy:               http.ProxyURL(proxy), // for every host: never the environment's NO_PROXY
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: FetchTimeout / 2,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return errorf("web_fetch: %v", err)
	}
	req.Header.Set("User-Agent", "brig-web-fetch/1 (terminal coding agent)")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/markdown,text/plain,application/json;q=0.9,*/*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		return errorf("web_fetch %s: %v", u, err)
	}
	defer resp.Body.Close()
	meta := Meta{URL: u.String(), Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type")}

	if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
		next, err := u.Parse(loc)
		if err != nil {
			return Result{Text: fmt.Sprintf("%s redirected (%d) to an unusable location %q: %v", u, resp.StatusCode, loc, err), IsError: true, Meta: meta}
		}
		meta.Redirect = next.String()
		return Result{Text: fmt.Sprintf("%s redirected (%d) to %s", u, resp.StatusCode, next), Meta: meta}
	}

	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxFetchBodyBytes+1))
	if err != nil && len(body) == 0 {
		return errorf("web_fetch %s: reading the body: %v", u, err)
	}
	cut := len(body) > MaxFetchBodyBytes
	if cut {
		body = body[:MaxFetchBodyBytes]
	}
	meta.Bytes = int64(len(body))
	res := renderBody(u, resp.Header.Get("Content-Type"), body, cut)
	res.Meta = meta
	res.Meta.Truncated = res.Meta.Truncated || cut
	header := fmt.Sprintf("URL: %s\nStatus: %s\nContent-Type: %s\n", u, resp.Status, orNone(meta.ContentType))
	if cut {
		header += fmt.Sprintf("[the body was longer than %d MiB; only the first %d MiB were read]\n", MaxFetchBodyBytes>>20, MaxFetchBodyBytes>>20)
	}
	res.Text = capText(header+"\n"+res.Text, MaxFetchTextBytes)
	if resp.StatusCode >= 400 {
		res.IsError = true
	}
	return res
}

func orNone(s string) string {
	if s == "" {
		return "(none given)"
	}
	return s
}

// renderBody turns a body into what the model reads.
func renderBody(u *url.URL, contentType string, body []byte, cut bool) Result {
	media, params, _ := mime.ParseMediaType(contentType)
	if media == "" {
		media, params, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	switch {
	case media == "text/html" || media == "application/xhtml+xml":
		text, err := decodeCharset(body, contentType)
		if err != nil {
			return errorf("web_fetch %s: %v", u, err)
		}
		md, err := htmlToMarkdown(text, u)
		if err != nil {
			return errorf("web_fetch %s: converting HTML: %v", u, err)
		}
		return Result{Text: md}
	case strings.HasPrefix(media, "image/"):
		if cut {
			return errorf("web_fetch %s: the image is larger than %d MiB", u, MaxFetchBodyBytes>>20)
		}
		img, note, err := CapImage(body)
		if err != nil {
			return errorf("web_fetch %s: %v", u, err)
		}
		return Result{Text: fmt.Sprintf("Image: %d×%d %s%s", img.Width, img.Height, img.MediaType, note), Images: []Image{img}}
	case textual(media):
		text, err := decodeCharset(body, contentType)
		if err != nil {
			return errorf("web_fetch %s: %v", u, err)
		}
		if !utf8.ValidString(text) {
			text = strings.ToValidUTF8(text, "\uFFFD")
		}
		return Result{Text: text}
	}
	_ = params
	return errorf("web_fetch %s: the content is %s (%s), which is not text; it is not shown", u, media, humanBytes(int64(len(body))))
}

// textual reports whether a media type is text a model can read.
func textual(media string) bool {
	switch {
	case strings.HasPrefix(media, "text/"),
		media == "application/json", media == "application/xml", media == "application/javascript",
		media == "application/x-javascript", media == "application/ecmascript", media == "application/toml",
		media == "application/yaml", media == "application/x-yaml", media == "application/x-sh",
		strings.HasSuffix(media, "+json"), strings.HasSuffix(media, "+xml"):
		return true
	}
	return false
}

// decodeCharset converts body to UTF-8 from the charset the header or the
// document declares.
func decodeCharset(body []byte, contentType string) (string, error) {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		return strings.ToValidUTF8(string(body), "\uFFFD"), nil
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("decode the text: %v", err)
	}
	return string(out), nil
}

// htmlToMarkdown converts a page to Markdown, dropping what is not content
// (scripts, styles, navigation, forms), with links made absolute.
func htmlToMarkdown(page string, u *url.URL) (string, error) {
	conv := htmltomarkdown.NewConverter(htmltomarkdown.WithPlugins(
		base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin(),
	))
	for _, tag := range []string{"nav", "footer", "noscript", "svg", "iframe", "form", "button", "template", "canvas"} {
		conv.Register.TagType(tag, htmltomarkdown.TagTypeRemove, htmltomarkdown.PriorityStandard)
	}
	md, err := conv.ConvertString(page, htmltomarkdown.WithDomain(u.Scheme+"://"+u.Host))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(md), nil
}
