package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"brig/tools"
)

// convertResult turns a server's answer into what the model sees: its text
// parts (capped), its images (capped like view_image, at most
// MaxMCPImages), a line for each thing that is neither, and the structured
// content as JSON when there is nothing else.
func convertResult(r *sdk.CallToolResult) tools.Result {
	var text []string
	var images []tools.Image
	for _, c := range r.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			text = append(text, c.Text)
		case *sdk.ImageContent:
			if len(images) >= tools.MaxMCPImages {
				text = append(text, fmt.Sprintf("[image omitted: more than %d images in one result]", tools.MaxMCPImages))
				continue
			}
			img, note, err := tools.CapImage(c.Data)
			if err != nil {
				text = append(text, fmt.Sprintf("[image (%s) omitted: %v]", c.MIMEType, err))
				continue
			}
			images = append(images, img)
			text = append(text, fmt.Sprintf("[image %d: %d×%d %s%s]", len(images), img.Width, img.Height, img.MediaType, note))
		case *sdk.AudioContent:
			text = append(text, fmt.Sprintf("[audio (%s, %d bytes) omitted: not supported]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			text = append(text, fmt.Sprintf("[resource link: %s %s]", c.Name, c.URI))
		case *sdk.EmbeddedResource:
			switch {
			case c.Resource == nil:
			case c.Resource.Text != "":
				text = append(text, fmt.Sprintf("[resource %s]\n%s", c.Resource.URI, c.Resource.Text))
			default:
				text = append(text, fmt.Sprintf("[binary resource %s (%s, %d bytes) omitted]", c.Resource.URI, c.Resource.MIMEType, len(c.Resource.Blob)))
			}
		default:
			text = append(text, fmt.Sprintf("[content of type %T omitted]", c))
		}
	}
	if len(r.Content) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			text = append(text, string(b))
		}
	}
	out := strings.Join(text, "\n")
	if out == "" {
		out = "(the tool returned no content)"
	}
	return tools.Result{Text: tools.CapText(out, tools.MaxMCPTextBytes), Images: images, IsError: r.IsError}
}
