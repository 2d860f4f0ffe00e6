package jwtauth

import (
	"context"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

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
		b.Run(bc.method.Alg(), func(b *testing.B) {
			tok := sign(b, bc.method, bc.key, claims(), nil)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Verify(ctx, tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
