// Package jsonobj writes JSON objects whose members keep the order they are given in,
// without HTML escaping, the way Pi's JSON.stringify writes a session line.
//
// Invariant: Write of members (k1, v1), (k2, v2) gives {"k1":v1,"k2":v2} with each value
// encoded by Marshal, and Marshal(v) is json.Marshal(v) with <, > and & left as they are.
package jsonobj

import (
	"bytes"
	"encoding/json"
)

// Write writes members as one JSON object, in their order; member gives a member's key
// and value. A package keeps its own small member type (a positional literal like
// {"type", "text"} reads best) and marshals it through here.
func Write[M any](members []M, member func(M) (string, any)) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		key, value := member(m)
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		v, err := Marshal(value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Marshal is json.Marshal without HTML escaping (JSON.stringify escapes none of <, >, &).
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
