package jsjson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestMapStringsReachesNestedStringsOnly(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{"a":"x","b":[1,"y",{"c":"z","d":true,"e":null}]}`), &v); err != nil {
		t.Fatal(err)
	}
	got := MapStrings(v, strings.ToUpper)
	var want any
	_ = json.Unmarshal([]byte(`{"a":"X","b":[1,"Y",{"c":"Z","d":true,"e":null}]}`), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if v.(map[string]any)["a"] != "x" {
		t.Error("the input was changed")
	}
}
