package gen

import (
	"reflect"
	"strings"
	"testing"
)

type extBase struct {
	ID       string   `json:"id"`
	Kids     []string `json:"kids"`
	Label    string   `json:"label,omitempty"`
	Modified bool     `json:"modified"`
}

type extFlat struct {
	extBase
	Label  int       `json:"label"`          // declared again: another type
	Kids   *struct{} `json:"kids,omitempty"` // hidden
	Parent string    `json:"parent"`
}

type extOther struct {
	Name string `json:"name"`
}

type extTwo struct {
	extBase
	extOther
}

// TestDeclareExtendsADeclaredBase: a struct that embeds one declared beside it extends
// it, less what it hides or declares again, and writes only its own members; one whose
// base is not declared, or that embeds two, is written out whole.
func TestDeclareExtendsADeclaredBase(t *testing.T) {
	s := newShaper()
	s.ref(reflect.TypeFor[extBase](), sent)
	got := declare(s, nil, reflect.TypeFor[extFlat](), sent)
	want := "export interface ExtFlat extends Omit<ExtBase, \"kids\" | \"label\"> {\n  label: number;\n  parent: string;\n}\n"
	if got != want {
		t.Errorf("declare(extFlat) =\n%s\nwant\n%s", got, want)
	}

	s.ref(reflect.TypeFor[extOther](), sent)
	for name, c := range map[string]struct {
		s *shaper
		t reflect.Type
		r role
	}{
		"base not declared":   {newShaper(), reflect.TypeFor[extFlat](), sent},
		"base read, not sent": {s, reflect.TypeFor[extFlat](), read},
		"two embedded":        {s, reflect.TypeFor[extTwo](), sent},
	} {
		got := declare(c.s, nil, c.t, c.r)
		if strings.Contains(got, "extends") || !strings.Contains(got, "  id") {
			t.Errorf("%s: declare wrote\n%s\nwant every member, no extends", name, got)
		}
	}
}
