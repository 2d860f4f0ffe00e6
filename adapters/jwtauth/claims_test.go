package jwtauth

import (
	"context"
	"slices"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

func TestVerifyReadsScopes(t *testing.T) {
	k := fixtures(t)
	v := newVerifier(t, staticConfig(t))
	tests := []struct {
		name  string
		claim map[string]any
		want  []string
	}{
		{"scope string", map[string]any{"scope": "plants:write plants:read"}, []string{"plants:write", "plants:read"}},
		{"scope with extra spaces", map[string]any{"scope": "  plants:write   plants:read "}, []string{"plants:write", "plants:read"}},
		{"scope empty", map[string]any{"scope": ""}, nil},
		{"scope null", map[string]any{"scope": nil}, nil},
		{"scope with JSON escapes", map[string]any{"scope": "a<b c&d"}, []string{"a<b", "c&d"}},
		{"scp array", map[string]any{"scp": []string{"plants:write", "plants:read"}}, []string{"plants:write", "plants:read"}},
		{"scp string", map[string]any{"scp": "plants:write plants:read"}, []string{"plants:write", "plants:read"}},
		{"scp empty array", map[string]any{"scp": []string{}}, nil},
		{"scope and scp merged", map[string]any{"scope": "a b", "scp": []string{"b", "c"}}, []string{"a", "b", "c"}},
		{"neither", map[string]any{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := claims()
			delete(c, "scope")
			for name, value := range tt.claim {
				c[name] = value
			}
			p, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, k.secret, c, nil))
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !slices.Equal(p.Scopes, tt.want) {
				t.Errorf("scopes = %q, want %q", p.Scopes, tt.want)
			}
			for _, s := range tt.want {
				if !p.HasScope(s) {
					t.Errorf("HasScope(%q) = false", s)
				}
			}
		})
	}
}

func TestVerifyDoesNotSplitScopesOnOtherSeparators(t *testing.T) {
	k := fixtures(t)
	v := newVerifier(t, staticConfig(t))
	c := claims()
	c["scope"] = "plants:write,plants:read"
	p, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, k.secret, c, nil))
	if err != nil {
		t.Fatal(err)
	}
	if p.HasScope("plants:write") {
		t.Errorf("a comma-separated scope granted plants:write: %q", p.Scopes)
	}
}
