package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as a fake MCP stdio server (argv[1] ==
// fakeServerArg) so that tests run a real server process through the real
// jail. Its tools report what the server can see and do.
const fakeServerArg = "__brig_fake_mcp_server"

type fakeArgs struct {
	Text string `json:"text"`
	Path string `json:"path"`
	Addr string `json:"addr"`
}

func fakeTool(s *sdk.Server, name, desc string, h func(a fakeArgs) *sdk.CallToolResult) {
	s.AddTool(&sdk.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"path":{"type":"string"},"addr":{"type":"string"}}}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var a fakeArgs
			_ = json.Unmarshal(req.Params.Arguments, &a)
			return h(a), nil
		})
}

func text(format string, a ...any) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(format, a...)}}}
}

func fail(format string, a ...any) *sdk.CallToolResult {
	r := text(format, a...)
	r.IsError = true
	return r
}

// fakeServerMain serves until stdin closes.
func fakeServerMain() int {
	s := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, nil)
	fakeTool(s, "echo", "Echo the text", func(a fakeArgs) *sdk.CallToolResult { return text("echo: %s", a.Text) })
	fakeTool(s, "env", "List the environment", func(fakeArgs) *sdk.CallToolResult {
		env := os.Environ()
		sort.Strings(env)
		return text("%s", strings.Join(env, "\n"))
	})
	fakeTool(s, "read", "Read a file", func(a fakeArgs) *sdk.CallToolResult {
		b, err := os.ReadFile(a.Path)
		if err != nil {
			return fail("read %s: %v", a.Path, err)
		}
		return text("%s", b)
	})
	fakeTool(s, "dial", "Connect to a TCP address (through the proxy in HTTP_PROXY, when there is one) and say hello", func(a fakeArgs) *sdk.CallToolResult {
		c, err := dialVia(os.Getenv("HTTP_PROXY"), a.Addr)
		if err != nil {
			return fail("dial %s: %v", a.Addr, err)
		}
		defer c.Close()
		fmt.Fprintln(c, "hello from the MCP server")
		return text("connected to %s", a.Addr)
	})
	fakeTool(s, "image", "A wide PNG", func(fakeArgs) *sdk.CallToolResult {
		var buf bytes.Buffer
		_ = png.Encode(&buf, image.NewGray(image.Rect(0, 0, 4000, 20)))
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a picture"}, &sdk.ImageContent{Data: buf.Bytes(), MIMEType: "image/png"}}}
	})
	fakeTool(s, "crash", "Exit at once", func(fakeArgs) *sdk.CallToolResult {
		fmt.Fprintln(os.Stderr, "fake server: crashing on purpose")
		os.Exit(3)
		return nil
	})
	fakeTool(s, "hang", "Never answer", func(fakeArgs) *sdk.CallToolResult {
		select {}
	})
	fakeTool(s, "flood", "Write a line longer than any message may be", func(fakeArgs) *sdk.CallToolResult {
		big := bytes.Repeat([]byte("x"), maxLine+1024)
		os.Stdout.Write(big)
		os.Stdout.Write([]byte("\n"))
		return text("flooded")
	})
	fakeTool(s, "plant", "Write a file at the given path", func(a fakeArgs) *sdk.CallToolResult {
		if err := os.WriteFile(a.Path, []byte(a.Text), 0o644); err != nil {
			return fail("write %s: %v", a.Path, err)
		}
		return text("wrote %s", a.Path)
	})
	fakeTool(s, "bad__name", "A name with the separator", func(fakeArgs) *sdk.CallToolResult { return text("never") })
	if len(os.Args) > 3 {
		schemaTools(s, os.Args[3])
	}
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fake server:", err)
		return 1
	}
	return 0
}

// schemaTools adds tools whose schemas or descriptions are large: "bloat"
// one schema of 100 KiB and one description of 100 KiB, "many" twenty
// schemas of 60 KiB.
func schemaTools(s *sdk.Server, kind string) {
	schema := func(kib int) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
			"text": map[string]any{"type": "string", "description": strings.Repeat("d", kib<<10)}}})
		return b
	}
	add := func(name, desc string, sch json.RawMessage) {
		s.AddTool(&sdk.Tool{Name: name, Description: desc, InputSchema: sch}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text("ran %s", name), nil
		})
	}
	switch kind {
	case "bloat":
		add("bloated", "A tool with a huge schema", schema(100))
		add("longdesc", strings.Repeat("w", 100<<10), schema(0))
	case "many":
		for i := range 20 {
			add(fmt.Sprintf("wide%02d", i), "A wide tool", schema(60))
		}
	}
}

// dialVia connects to addr, through a CONNECT tunnel of the HTTP proxy at
// proxyURL when it is set.
func dialVia(proxyURL, addr string) (net.Conn, error) {
	if proxyURL == "" {
		return net.DialTimeout("tcp", addr, 2*time.Second)
	}
	u, err := url.Parse(proxyURL)
	if err != nil {
		return nil, err
	}
	c, err := net.DialTimeout("tcp", u.Host, 2*time.Second)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		c.Close()
		return nil, fmt.Errorf("the proxy refused: %s (%s)", resp.Status, resp.Header.Get("X-Brig-Refused"))
	}
	return c, nil
}
