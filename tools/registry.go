package tools

import (
	"brig/internal/xdg"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"brig/jail"
	"brig/policy/toolcall"
	"brig/tools/textfile"
)

// Name is a native tool's name. Dispatch goes by Name, never by raw strings.
type Name string

// The native tools. (MCP tools are named server__tool and come from a
// Source.)
const (
	ReadFile        Name = textfile.Name
	WriteFile       Name = "write_file"
	EditFile        Name = "edit_file"
	MultiEdit       Name = "multi_edit"
	ListDirectory   Name = "list_directory"
	Glob            Name = "glob"
	SearchCode      Name = "search_code"
	Bash            Name = "bash"
	CreateDirectory Name = "create_directory"
	MovePath        Name = "move_path"
	CopyPath        Name = "copy_path"
	DeletePath      Name = "delete_path"
	ViewImage       Name = "view_image"
	UpdatePlan      Name = "update_plan"
	WebFetch        Name = "web_fetch"
)

// Runner says where a tool runs.
type Runner int

const (
	// InJail: Go code compiled into brig, run by the jail worker.
	InJail Runner = iota
	// JailCommand: a command line run by the jail worker (bash).
	JailCommand
	// InSupervisor: no jail; the tool touches nothing outside brig
	// (update_plan).
	InSupervisor
	// External: a tool of a Source (an MCP server), run by the source
	// through RunExternal after the policy allowed the call.
	External
	// Delegated: run by a hook the agent provides (task starts a
	// subagent), in the supervisor.
	Delegated
)

// Definition is everything about one tool.
type Definition struct {
	Name        Name
	Description string
	// Schema is the JSON schema of the arguments (the provider's
	// input_schema).
	Schema json.RawMessage
	Effect toolcall.Effect
	Runs   Runner

	call     func(json.RawMessage) (toolcall.Call, error)
	invoke   func(json.RawMessage) (jail.Invocation, error)
	run      func(context.Context, json.RawMessage) Result // InJail only
	external func(context.Context, json.RawMessage) Result // External only
	// readOnly marks an External tool as changing nothing (an MCP server
	// configured read_only): offered in plan mode, run alongside others.
	readOnly bool
	// grant is an External tool's server's jail (nil: none, or not a
	// jail brig made): what it may write is snapshotted around each call
	// for undo, as a command's grant is.
	grant *jail.Spec
}

// WithGrant is d with its server's jail grant (see Grant).
func (d Definition) WithGrant(g *jail.Spec) Definition {
	d.grant = g
	return d
}

// Grant is the jail an External tool's server runs in, when brig made it
// (a stdio server's); nil otherwise.
func (d Definition) Grant() *jail.Spec { return d.grant }

// Offered reports whether mode offers the tool to the model (and lets it
// run): plan mode hides native tools that write and every External tool
// that is not read-only.
func (d Definition) Offered(mode toolcall.Mode) bool {
	if d.Runs == External {
		return mode != toolcall.ModePlan || d.readOnly
	}
	return mode.Advertises(d.Effect)
}

// ReadOnly reports whether the tool changes nothing, so a call may run
// alongside its neighbours.
func (d Definition) ReadOnly() bool {
	if d.Runs == External {
		return d.readOnly
	}
	return d.Effect == toolcall.EffectRead || d.Effect == toolcall.EffectNone || d.Effect == toolcall.EffectNetwork
}

// RunExternal runs an External tool (after the policy allowed the call).
func (d Definition) RunExternal(ctx context.Context, args json.RawMessage) Result {
	if d.external == nil {
		return errorf("%s is not an external tool", d.Name)
	}
	return d.external(ctx, args)
}

// NewExternal describes a tool of a Source: check validates the arguments
// (an error is a model-facing message), run performs the call. Its
// toolcall.Call is EffectMCP under the tool's own name, decided by Mcp rules.
func NewExternal(name, description string, schema json.RawMessage, readOnly bool, check func(json.RawMessage) error, run func(context.Context, json.RawMessage) Result) Definition {
	return Definition{
		Name: Name(name), Description: description, Schema: schema, Effect: toolcall.EffectMCP, Runs: External,
		readOnly: readOnly, external: run,
		call: func(raw json.RawMessage) (toolcall.Call, error) {
			if check != nil {
				if err := check(raw); err != nil {
					return toolcall.Call{}, err
				}
			}
			return toolcall.Call{Tool: name, Effect: toolcall.EffectMCP}, nil
		},
	}
}

// Source is a set of tools from outside brig's native set (the MCP
// manager). Its tools are named so that they never collide with native
// ones (server__tool).
type Source interface {
	Tools() []Definition
}

// Call decodes and checks the arguments and returns what the call needs,
// for the policy. An error is a model-facing message about bad arguments.
func (d Definition) Call(args json.RawMessage) (toolcall.Call, error) { return d.call(args) }

// Invocation is what the jail runs for these arguments. Tools that run in
// the supervisor have none.
func (d Definition) Invocation(args json.RawMessage) (jail.Invocation, error) {
	if d.invoke == nil {
		return jail.Invocation{}, fmt.Errorf("%s runs in the supervisor, not in the jail", d.Name)
	}
	return d.invoke(args)
}

// validator is implemented by every tool's argument struct.
type validator interface{ validate() error }

// pather is implemented by argument structs that name paths, so a leading
// "~" can be expanded before the arguments cross into the jail (which has no
// HOME of its own).
type pather interface{ pathFields() []*string }

// fileOpener is implemented by the arguments of a file tool (one that
// reads the one file it names, and that an init serving calls runs
// itself: jail.FileTool): openPath is that file, the invocation's Open.
type fileOpener interface{ openPath() string }

// jsonKind names the JSON value a Go type takes.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "another type"
}

// decodeArgs decodes strictly: unknown fields and trailing data are errors
// the model can act on.
func decodeArgs[T any, PT interface {
	*T
	validator
}](raw json.RawMessage) (T, error) {
	var v T
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			// Go's own words name the struct ("Go struct field
			// readArgs.path"): the model knows the argument's name.
			return v, fmt.Errorf("invalid arguments: %s must be %s, not %s", te.Field, jsonKind(te.Type), te.Value)
		}
		return v, fmt.Errorf("invalid arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return v, errors.New("invalid arguments: trailing data after the JSON object")
	}
	if err := PT(&v).validate(); err != nil {
		return v, err
	}
	return v, nil
}

// define builds a Definition from a typed argument struct, the Call its
// arguments need, and (for InJail tools) the implementation.
func define[T any, PT interface {
	*T
	validator
}](name Name, effect toolcall.Effect, desc, schema string, call func(T) toolcall.Call, run func(context.Context, T) Result) Definition {
	d := Definition{
		Name: name, Description: desc, Schema: json.RawMessage(schema), Effect: effect, Runs: InJail,
		call: func(raw json.RawMessage) (toolcall.Call, error) {
			v, err := decodeArgs[T, PT](raw)
			if err != nil {
				return toolcall.Call{}, err
			}
			c := call(v)
			c.Tool, c.Effect = string(name), effect
			return c, nil
		},
	}
	if run != nil {
		d.invoke = func(raw json.RawMessage) (jail.Invocation, error) {
			v, err := decodeArgs[T, PT](raw)
			if err != nil {
				return jail.Invocation{}, err
			}
			if p, ok := any(&v).(pather); ok {
				home, _ := xdg.Home(os.Environ()) // as the policy's (no home: no expansion; brig did not start)
				for _, f := range p.pathFields() {
					*f = expandHome(*f, home)
				}
			}
			b, err := json.Marshal(v)
			if err != nil {
				return jail.Invocation{}, fmt.Errorf("encode %s arguments: %w", name, err)
			}
			inv := jail.Invocation{Tool: string(name), Args: b}
			if o, ok := any(&v).(fileOpener); ok {
				inv.Open = o.openPath()
			}
			return inv, nil
		}
		d.run = func(ctx context.Context, raw json.RawMessage) Result {
			v, err := decodeArgs[T, PT](raw)
			if err != nil {
				return errorf("%s: %v", name, err)
			}
			return run(ctx, v)
		}
	}
	return d
}

// expandHome turns "~" and "~/x" into paths under home.
func expandHome(p, home string) string {
	if home == "" {
		return p
	}
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return p
}

// Registry holds the native tools and the sources of external ones.
type Registry struct {
	order   []Name
	byName  map[Name]Definition
	sources []Source
}

// Add registers a native tool that NewRegistry leaves out (task, which
// only a session with subagents offers). Call it while setting up.
func (r *Registry) Add(d Definition) {
	if _, ok := r.byName[d.Name]; !ok {
		r.order = append(r.order, d.Name)
	}
	r.byName[d.Name] = d
}

// AddSource adds external tools (MCP). Call it while setting up, before
// the registry is used.
func (r *Registry) AddSource(s Source) { r.sources = append(r.sources, s) }

// NewRegistry returns a registry of every native tool.
func NewRegistry() *Registry {
	r := &Registry{byName: map[Name]Definition{}}
	for _, d := range []Definition{
		readFileDef(), writeFileDef(), editFileDef(), multiEditDef(),
		listDirectoryDef(), globDef(), searchCodeDef(), bashDef(),
		createDirectoryDef(), movePathDef(), copyPathDef(), deletePathDef(),
		viewImageDef(), updatePlanDef(), webFetchDef(),
	} {
		r.order = append(r.order, d.Name)
		r.byName[d.Name] = d
	}
	return r
}

// Definitions returns every tool, native ones first, in a stable order.
func (r *Registry) Definitions() []Definition {
	out := make([]Definition, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.byName[n])
	}
	for _, s := range r.sources {
		for _, d := range s.Tools() {
			if _, native := r.byName[d.Name]; !native {
				out = append(out, d)
			}
		}
	}
	return out
}

// Advertised returns the tools offered to the model in mode (plan mode
// hides every tool that writes, and external tools not marked read-only).
func (r *Registry) Advertised(mode toolcall.Mode) []Definition {
	return slices.DeleteFunc(r.Definitions(), func(d Definition) bool { return !d.Offered(mode) })
}

// Lookup finds a tool by the name the model used.
func (r *Registry) Lookup(name string) (Definition, bool) {
	if d, ok := r.byName[Name(name)]; ok {
		return d, true
	}
	for _, s := range r.sources {
		for _, d := range s.Tools() {
			if string(d.Name) == name {
				return d, true
			}
		}
	}
	return Definition{}, false
}

// Prepared is a call that passed the registry's checks.
type Prepared struct {
	Def  Definition
	Call toolcall.Call
	// Invocation is what the jail runs; zero for InSupervisor and
	// External tools.
	Invocation jail.Invocation
}

// Prepare checks a call the model made: the tool exists, the mode allows it
// (the run-time half of plan mode, whatever was advertised), and its
// arguments are valid. A refusal is an error Result for the model, never a
// Go error, so every tool_use still gets its tool_result.
func (r *Registry) Prepare(mode toolcall.Mode, name string, args json.RawMessage) (Prepared, *Result) {
	d, ok := r.Lookup(name)
	if !ok {
		res := errorf("unknown tool %q; the available tools are: %s", name, strings.Join(r.names(mode), ", "))
		return Prepared{}, &res
	}
	if !d.Offered(mode) {
		res := errorf("%s is not available in %s mode, which is read-only; describe the change instead, or ask the user to switch modes", name, mode)
		return Prepared{}, &res
	}
	c, err := d.Call(args)
	if err != nil {
		res := errorf("%s: %v", name, err)
		return Prepared{}, &res
	}
	p := Prepared{Def: d, Call: c}
	if d.Runs == InJail || d.Runs == JailCommand {
		if p.Invocation, err = d.Invocation(args); err != nil {
			res := errorf("%s: %v", name, err)
			return Prepared{}, &res
		}
	}
	return p, nil
}

func (r *Registry) names(mode toolcall.Mode) []string {
	var out []string
	for _, d := range r.Advertised(mode) {
		out = append(out, string(d.Name))
	}
	return out
}

// JailTools returns the Go tools of this registry for jail.ChildMain.
func (r *Registry) JailTools() map[string]jail.ToolFunc {
	out := map[string]jail.ToolFunc{}
	for _, d := range r.Definitions() {
		if d.Runs != InJail || d.run == nil {
			continue
		}
		out[string(d.Name)] = toolFunc(d)
	}
	out[BatchTool] = batchFunc(maps.Clone(out))
	return out
}

// JailTools returns every native Go tool, for the jail entry point.
func JailTools() map[string]jail.ToolFunc { return NewRegistry().JailTools() }

// toolFunc adapts an implementation to the jail: the Result is the output,
// and a result too large for the jail's message becomes an error Result.
func toolFunc(d Definition) jail.ToolFunc {
	return func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		res := d.run(ctx, args)
		b, err := json.Marshal(res)
		if err != nil {
			return nil, fmt.Errorf("encode the %s result: %w", d.Name, err)
		}
		if len(b) > MaxResultJSONBytes {
			slog.Warn("tool result too large", "tool", d.Name, "bytes", len(b))
			b, err = json.Marshal(errorf("%s produced a %d-byte result, more than the %d bytes a tool may return; narrow the request", d.Name, len(b), MaxResultJSONBytes))
			if err != nil {
				return nil, err
			}
		}
		return b, nil
	}
}
