package rpc

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode"
)

// This file renders the wire types of protocol_types.go as TypeScript: inline shapes for
// docs/protocol.md and interfaces for the VS Code extension. The rules follow what
// encoding/json does with the types, so the rendered shape is what the server sends:
//   - in what the server sends, a field with omitempty is optional, and a pointer or
//     raw value without it is present and may be null;
//   - in what the server reads (params, hook answers), every field is optional unless
//     its ts tag says required, because an absent field decodes to its zero value;
//   - a `ts:"Name"` tag names the type where Go's says too little (raw JSON).

// role says which way a shape travels, which decides what "optional" means.
type role int

const (
	sent role = iota // server -> client: results, notifications, hook params
	read             // client -> server: params, hook answers
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

// tagTypes are the Go types that a ts tag names (a raw field the server fills from one
// of them, or passes on from a live pi in the same shape): declared like the others.
var tagTypes = map[string]reflect.Type{
	"CompactionEndResult": reflect.TypeFor[CompactionEndResult](),
}

// tsNames renames types whose Go name would read wrong in TypeScript.
var tsNames = map[string]string{
	"contextedit.Item": "ContextItem",
	"rpc.FlatNode":     "FlatTreeNode",
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
		if i := strings.LastIndex(ts, ","); i >= 0 {
			override, flags = ts[:i], ts[i+1:]
		}
		out = append(out, tsField{goName: f.Name, name: name, typ: f.Type, override: override,
			required: flags == "required", omit: strings.Contains(","+opts+",", ",omitempty,"), owner: t})
	}
	// An outer member wins over an embedded one of the same name (as in encoding/json).
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
// they can be declared once.
type shaper struct {
	seen  map[reflect.Type]bool
	order []reflect.Type
	roles map[reflect.Type]role
}

func newShaper() *shaper {
	return &shaper{seen: map[reflect.Type]bool{}, roles: map[reflect.Type]role{}}
}

// ref registers a named struct type to declare and returns its name.
func (s *shaper) ref(t reflect.Type, r role) string {
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

// member renders one field as `name?: T`.
func (s *shaper) member(f tsField, r role) string {
	t := f.override
	if t == "" {
		t = s.expr(f.typ, r)
	} else if named, ok := tagTypes[strings.TrimSuffix(t, "[]")]; ok {
		s.ref(named, r)
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

// MatchShape reports how raw JSON differs from every one of types (nil when it has the
// shape of one of them): a key the type does not declare, or a member it declares
// present that is missing. It reads what the server sends (role sent), so tests can
// hold every answer and notification to its documented shape.
func MatchShape(raw json.RawMessage, types ...reflect.Type) error {
	var errs []string
	for _, t := range types {
		err := matchStruct(raw, t, "")
		if err == nil {
			return nil
		}
		errs = append(errs, tsName(t)+": "+err.Error())
	}
	return fmt.Errorf("%s", strings.Join(errs, "; "))
}

func matchStruct(raw json.RawMessage, t reflect.Type, at string) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return fmt.Errorf("%s: not an object: %s", at, raw)
	}
	declared := map[string]bool{}
	for _, f := range fieldsOf(t) {
		declared[f.name] = true
		v, ok := obj[f.name]
		if !ok {
			if !f.omit {
				return fmt.Errorf("%s.%s missing", at, f.name)
			}
			continue
		}
		if err := matchValue(v, f.typ, at+"."+f.name); err != nil {
			return err
		}
	}
	for k := range obj {
		if !declared[k] {
			return fmt.Errorf("%s.%s not declared", at, k)
		}
	}
	return nil
}

// matchValue follows nested structs (and slices of them); raw JSON and scalars are
// taken as they come.
func matchValue(v json.RawMessage, t reflect.Type, at string) error {
	if string(v) == "null" {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == rawType || t == timeType:
		return nil
	case t.Kind() == reflect.Struct:
		return matchStruct(v, t, at)
	case t.Kind() == reflect.Slice && t.Elem() != rawType:
		var items []json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil {
			return fmt.Errorf("%s: not an array", at)
		}
		for i, it := range items {
			if err := matchValue(it, t.Elem(), fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}
