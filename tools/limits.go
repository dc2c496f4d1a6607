package tools

import (
	"time"

	"brig/tools/textfile"
)

// Every model-facing cap of the native tools lives here, so that what the
// model can receive is decided in one place. Byte figures count the bytes of
// the text the model sees, not the files on disk.
const (
	// read_file (its logic lives in textfile, which the jail's init links).
	MaxReadLines     = textfile.MaxLines     // lines returned by one read_file call
	MaxReadBytes     = textfile.MaxBytes     // bytes of numbered text returned by one call
	MaxLineChars     = textfile.MaxLineChars // a longer line is cut, with a marker
	MaxHashFileBytes = textfile.MaxHashBytes // files up to this size get a content hash and a line count

	// edit_file, multi_edit, write_file.
	MaxEditFileBytes  = 10 << 20  // larger files cannot be edited (use bash)
	MaxWriteBytes     = 10 << 20  // content of one write_file call
	MaxMultiEdits     = 50        // edits in one multi_edit call
	MaxDiffModelBytes = 8 << 10   // diff shown to the model after an edit
	MaxDiffMetaBytes  = 256 << 10 // diff handed to the UI
	DiffContextLines  = 2         // unchanged lines around each hunk
	maxDiffInputBytes = 2 << 20   // files larger than this get no diff

	// list_directory, glob.
	MaxListEntries = 500
	MaxGlobResults = 500

	// search_code.
	MaxSearchMatches    = 200       // default and ceiling of max_results
	MaxSearchBytes      = 48 << 10  // bytes of match lines returned
	MaxSearchLineChars  = 300       // a longer matching line is cut
	MaxSearchFileBytes  = 4 << 20   // larger files are skipped by both engines
	searchFileSizeRgArg = "4194304" // MaxSearchFileBytes for rg --max-filesize

	// view_image.
	MaxImageFileBytes = 20 << 20 // raw bytes of the file on disk
	MaxImageSide      = 2048     // long side of the image the model receives
	MaxImagePixels    = 100e6    // larger images are refused before decoding
	// MaxImageBytes bounds the encoded image the model receives. It also
	// keeps the base64 form (4/3 larger) inside the jail's 4 MiB result
	// message with room to spare.
	MaxImageBytes = 2560 << 10

	// bash.
	MaxCommandOutputBytes = 30 << 10                                 // stdout+stderr shown to the model (head and tail kept)
	CommandHeadBytes      = 8 << 10                                  // of which the beginning
	CommandTailBytes      = MaxCommandOutputBytes - CommandHeadBytes // and the end, where results and errors are
	DefaultBashTimeout    = 2 * time.Minute
	MaxBashTimeout        = 10 * time.Minute

	// web_fetch.
	MaxFetchBodyBytes = 5 << 20   // raw body read from the server; the rest is dropped
	MaxFetchTextBytes = 100 << 10 // converted text (Markdown or plain) shown to the model
	MaxFetchRedirects = 5         // redirects followed, each decided by the policy again
	FetchTimeout      = 30 * time.Second

	// MCP tools (results come from servers brig does not control).
	MaxMCPTextBytes = 100 << 10 // text of one MCP result shown to the model
	MaxMCPImages    = 4         // images of one MCP result (each capped like view_image)
	MaxMCPArgsBytes = 1 << 20   // arguments sent to a server in one call

	// Every result.
	MaxResultJSONBytes = 3584 << 10 // a Go tool's whole result, below the jail's 4 MiB message
	MaxErrorTextBytes  = textfile.MaxErrorBytes
)
