// Package shape holds JSON to the Go type it is documented as: the wire types of
// internal/rpc and internal/bridge and the session entries of internal/session, from
// which docs/protocol.md and the editors' types are generated. Match follows what
// encoding/json writes for the type, independently of the generator: a key the type
// does not declare, a member it always writes that is missing, a null where it never
// writes one, or a value of another JSON kind is a mismatch.
package shape

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Match reports how raw differs from every one of types (nil when it has the shape of
// one of them).
func Match(raw json.RawMessage, types ...reflect.Type) error {
	var errs []string
	for _, t := range types {
		err := matchValue(raw, t, "", true)
		if err == nil {
			return nil
		}
		errs = append(errs, t.String()+": "+err.Error())
	}
	return fmt.Errorf("%s", strings.Join(errs, "; "))
}

var (
	rawType  = reflect.TypeFor[json.RawMessage]()
	timeType = reflect.TypeFor[time.Time]()
)

// member is one JSON member of a struct as encoding/json writes it.
type member struct {
	name  string
	typ   reflect.Type
	omit  bool   // omitempty: may be absent
	ts    string // the ts tag's type, if any
	depth int
}

// members lists the JSON members of struct t: embedded structs flattened, a shallower
// member winning over a deeper one of the same name (encoding/json's rule).
func members(t reflect.Type, depth int) []member {
	var out []member
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, members(f.Type, depth+1)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		ts := strings.TrimSuffix(f.Tag.Get("ts"), ",required")
		out = append(out, member{name: name, typ: f.Type, omit: strings.Contains(","+opts+",", ",omitempty,"), ts: ts, depth: depth})
	}
	best := map[string]int{}
	for i, m := range out {
		if j, ok := best[m.name]; !ok || m.depth < out[j].depth {
			best[m.name] = i
		}
	}
	var dedup []member
	for i, m := range out {
		if best[m.name] == i {
			dedup = append(dedup, m)
		}
	}
	return dedup
}

// wireType is what a session.Raw[T] (a type with a WireType method) is documented as.
func wireType(t reflect.Type) (reflect.Type, bool) {
	m, ok := t.MethodByName("WireType")
	if !ok || m.Type.NumIn() != 1 || m.Type.NumOut() != 1 || m.Type.Out(0) != reflect.TypeFor[reflect.Type]() {
		return nil, false
	}
	return reflect.Zero(t).Interface().(interface{ WireType() reflect.Type }).WireType(), true
}

func matchStruct(raw json.RawMessage, t reflect.Type, at string) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return fmt.Errorf("%s: not an object: %.80s", at, raw)
	}
	declared := map[string]bool{}
	for _, m := range members(t, 0) {
		declared[m.name] = true
		v, ok := obj[m.name]
		if !ok {
			if !m.omit {
				return fmt.Errorf("%s.%s missing", at, m.name)
			}
			continue
		}
		// null where the docs allow it: a pointer or raw value without omitempty, or a
		// ts type that says so (or says nothing).
		nullable := !m.omit && (m.typ.Kind() == reflect.Pointer || m.typ == rawType)
		if m.ts != "" {
			nullable = strings.Contains(m.ts, "null") || m.ts == "unknown"
		}
		if err := matchValue(v, m.typ, at+"."+m.name, nullable); err != nil {
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

// matchValue follows nested structs, slices and maps of them, and checks the JSON kind
// of scalars; raw JSON is taken as it comes.
func matchValue(v json.RawMessage, t reflect.Type, at string, nullable bool) error {
	if string(v) == "null" {
		if nullable {
			return nil
		}
		return fmt.Errorf("%s is null", at)
	}
	if wt, ok := wireType(t); ok {
		return matchValue(v, wt, at, nullable)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawType || t.Kind() == reflect.Interface {
		return nil
	}
	if _, ok := reflect.New(t).Interface().(json.Unmarshaler); ok && t.Kind() != reflect.Struct {
		return nil // a type that reads its own JSON (a timeout given as seconds or "5m")
	}
	kind := func(want byte, what string) error {
		if len(v) == 0 || !strings.ContainsRune(string(want), rune(v[0])) {
			return fmt.Errorf("%s: %.40s is not %s", at, v, what)
		}
		return nil
	}
	switch {
	case t == timeType:
		return kind('"', "a string")
	case t.Kind() == reflect.Struct:
		return matchStruct(v, t, at)
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		var items []json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil {
			return fmt.Errorf("%s: not an array", at)
		}
		for i, it := range items {
			if err := matchValue(it, t.Elem(), fmt.Sprintf("%s[%d]", at, i), false); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Map:
		var m map[string]json.RawMessage
		if err := json.Unmarshal(v, &m); err != nil {
			return fmt.Errorf("%s: not an object", at)
		}
		for k, it := range m {
			if err := matchValue(it, t.Elem(), at+"."+k, false); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.String:
		return kind('"', "a string")
	case t.Kind() == reflect.Bool:
		if string(v) != "true" && string(v) != "false" {
			return fmt.Errorf("%s: %.40s is not a boolean", at, v)
		}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Float64:
		var f float64
		if json.Unmarshal(v, &f) != nil {
			return fmt.Errorf("%s: %.40s is not a number", at, v)
		}
	}
	return nil
}
