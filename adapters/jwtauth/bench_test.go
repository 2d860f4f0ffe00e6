package jwtauth

import (
	"context"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// BenchmarkVerify measures a client reusing its token (a cache hit after the
// first request) and a token seen for the first time (the full check).
func BenchmarkVerify(b *testing.B) {
	k := fixtures(b)
	v := newVerifier(b, staticConfig(b))
	for _, bc := range []struct {
		method jwt.SigningMethod
		key    any
	}{
		{jwt.SigningMethodHS256, k.secret},
		{jwt.SigningMethodRS256, k.rsa.private},
		{jwt.SigningMethodES256, k.p256.private},
		{jwt.SigningMethodEdDSA, k.ed.private},
	} {
		tok := sign(b, bc.method, bc.key, claims(), nil)
		ctx := context.Background()
		b.Run(bc.method.Alg()+"/reused", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Verify(ctx, tok); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.method.Alg()+"/first-use", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := v.verify(tok, v.keys.Load()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
