package jsjson

// MapStrings is a copy of a value decoded by encoding/json (into any) with every string
// in it, nested ones included, replaced by f's result; object keys and other values are
// kept. The input is not changed.
func MapStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case string:
		return f(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = MapStrings(e, f)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = MapStrings(e, f)
		}
		return out
	}
	return v
}
