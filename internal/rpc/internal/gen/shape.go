package gen

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/pi-lsp/pi-lsp/internal/session"
)

// This file renders Go wire types as TypeScript: inline shapes for docs/protocol.md and
// interfaces for the editors. The rules follow what encoding/json does with the types,
// so the rendered shape is what is sent:
//   - in what is sent (results, notifications, hook params, everything of the bridge), a
//     field with omitempty is optional, and a pointer or raw value without it is present
//     and may be null;
//   - in what the server reads (params, hook answers, settings), every field is optional
//     unless its ts tag says required, because an absent field decodes to its zero value;
//   - a `ts:"Name"` tag names the type where Go's says too little (raw JSON), and a
//     session.Raw[T] (any type with a WireType method) is rendered as T.

// role says which way a shape travels, which decides what "optional" means.
type role int

const (
	sent role = iota // server -> client: results, notifications, hook params
	read             // client -> server: params, hook answers, settings
)

// tsField is one JSON member of a struct, embedded structs flattened.
type tsField struct {
	goName   string
	name     string
	typ      reflect.Type
	override string
	required bool
	omit     bool
	owner    reflect.Type // the struct that declares it (for its doc comment)
}

// tsNames renames types whose Go name would read wrong in TypeScript.
var tsNames = map[string]string{
	"contextedit.Item":   "ContextItem",
	"rpc.FlatNode":       "FlatTreeNode",
	"rpc.config":         "InitializationOptions",
	"rpc.settingsTree":   "NestedSettings",
	"rpc.piLspSettings":  "PiLspSettingsTree",
	"compaction.Details": "CompactionDetails",
	"bridge.Error":       "BridgeError",
}

// scalars are named types whose JSON is not what their kind says.
var scalars = map[reflect.Type]string{
	// A number of seconds or a duration string (Timeout.UnmarshalJSON).
	reflect.TypeFor[session.Timeout](): "number | string",
}

// tsName is the TypeScript name of a named struct type.
func tsName(t reflect.Type) string {
	if n, ok := tsNames[t.String()]; ok {
		return n
	}
	r := []rune(t.Name())
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// wireType is the type a session.Raw[T] (or any type with a WireType method) stands for.
func wireType(t reflect.Type) (reflect.Type, bool) {
	m, ok := t.MethodByName("WireType")
	if !ok || m.Type.NumIn() != 1 || m.Type.NumOut() != 1 || m.Type.Out(0) != reflect.TypeFor[reflect.Type]() {
		return nil, false
	}
	return reflect.Zero(t).Interface().(interface{ WireType() reflect.Type }).WireType(), true
}

// fieldsOf lists the JSON members of struct t in encoding order.
func fieldsOf(t reflect.Type) []tsField {
	var out []tsField
	hidden := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, fieldsOf(f.Type)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		// A *struct{} with omitempty is never set: it hides an embedded member.
		if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct && f.Type.Elem().NumField() == 0 {
			hidden[name] = true
			continue
		}
		ts := f.Tag.Get("ts")
		override, flags := ts, ""
		if o, ok := strings.CutSuffix(ts, ",required"); ok {
			override, flags = o, "required"
		}
		out = append(out, tsField{goName: f.Name, name: name, typ: f.Type, override: override,
			required: flags == "required", omit: strings.Contains(","+opts+",", ",omitempty,"), owner: t})
	}
	// An outer member wins over an embedded one of the same name (as in encoding/json),
	// in the embedded one's place.
	seen := map[string]int{}
	var dedup []tsField
	for _, f := range out {
		if hidden[f.name] {
			continue
		}
		if i, ok := seen[f.name]; ok {
			dedup[i] = f
			continue
		}
		seen[f.name] = len(dedup)
		dedup = append(dedup, f)
	}
	return dedup
}

var (
	rawType  = reflect.TypeFor[json.RawMessage]()
	timeType = reflect.TypeFor[time.Time]()
)

// shaper renders types and remembers the named struct types it referred to, so that
// they can be declared once, and the aliases the ts tags named.
type shaper struct {
	seen    map[reflect.Type]bool
	order   []reflect.Type
	roles   map[reflect.Type]role
	aliases map[string]bool // the names that can be aliases
	used    map[string]bool // the aliases named so far
}

func newShaper(aliases ...string) *shaper {
	s := &shaper{seen: map[reflect.Type]bool{}, roles: map[reflect.Type]role{}, aliases: map[string]bool{}, used: map[string]bool{}}
	for _, a := range aliases {
		s.aliases[a] = true
	}
	return s
}

// ref registers a named struct type to declare and returns its name.
func (s *shaper) ref(t reflect.Type, r role) string {
	if wt, ok := wireType(t); ok {
		return s.ref(wt, r)
	}
	if !s.seen[t] {
		s.seen[t] = true
		s.roles[t] = r
		s.order = append(s.order, t)
		// Its members' types are declared too.
		s.object(t, r)
	}
	return tsName(t)
}

// expr is the TypeScript of a Go type.
func (s *shaper) expr(t reflect.Type, r role) string {
	if ts, ok := scalars[t]; ok {
		return ts
	}
	if wt, ok := wireType(t); ok {
		return s.expr(wt, r)
	}
	switch {
	case t == rawType:
		return "unknown"
	case t == timeType:
		return "string"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return s.expr(t.Elem(), r)
	case reflect.Slice, reflect.Array:
		e := s.expr(t.Elem(), r)
		if strings.Contains(e, " | ") {
			e = "(" + e + ")"
		}
		return e + "[]"
	case reflect.Map:
		return "Record<string, " + s.expr(t.Elem(), r) + ">"
	case reflect.Struct:
		if t.Name() == "" {
			return s.object(t, r)
		}
		return s.ref(t, r)
	case reflect.Interface:
		return "unknown"
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	}
	panic(fmt.Sprintf("no TypeScript for %s", t))
}

var identifier = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// member renders one field as `name?: T`.
func (s *shaper) member(f tsField, r role) string {
	t := f.override
	if t == "" {
		t = s.expr(f.typ, r)
	} else {
		// The override says what the Go type does not; the named types in the Go type
		// are declared all the same, and so are the aliases it names.
		s.expr(f.typ, r)
		for _, id := range identifier.FindAllString(t, -1) {
			if s.aliases[id] {
				s.used[id] = true
			}
		}
	}
	opt := ""
	switch r {
	case sent:
		if f.omit {
			opt = "?"
		} else if f.override == "" && (f.typ.Kind() == reflect.Pointer || f.typ == rawType) {
			t += " | null"
		}
	case read:
		if !f.required {
			opt = "?"
		}
	}
	return f.name + opt + ": " + t
}

// object renders a struct inline: `{ a: string; b?: number }`.
func (s *shaper) object(t reflect.Type, r role) string {
	fs := fieldsOf(t)
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = s.member(f, r)
	}
	if len(parts) == 0 {
		return "{}"
	}
	return "{ " + strings.Join(parts, "; ") + " }"
}

// union renders result types inline, joined as a union.
func (s *shaper) union(ts []reflect.Type, r role) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = s.object(t, r)
	}
	return strings.Join(parts, " | ")
}
