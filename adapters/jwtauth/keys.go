package jwtauth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"fmt"
	"slices"

	"github.com/golang-jwt/jwt/v5"
)

// minRSABits is the smallest RSA modulus accepted; shorter keys can be
// factored by a determined attacker.
const minRSABits = 2048

var (
	hmacAlgs    = []string{"HS256", "HS384", "HS512"}
	rsaAlgs     = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}
	ecAlgs      = []string{"ES256", "ES384", "ES512"}
	ed25519Algs = []string{"EdDSA"}
)

// publicKey is one parsed verification key and the algorithms it may verify.
type publicKey struct {
	kid  string   // empty for keys that came without one (PEM keys)
	key  any      // *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
	algs []string // algorithms that fit the key's type, narrowed by a JWK's alg
}

// newPublicKey checks that key is of a supported type and strength and works
// out which algorithms it may verify. declaredAlg, when not empty, is the alg
// a JWK pins its key to.
func newPublicKey(kid string, key any, declaredAlg string) (publicKey, error) {
	var algs []string
	switch k := key.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < minRSABits {
			return publicKey{}, fmt.Errorf("RSA key of %d bits is too short; at least %d are required", k.N.BitLen(), minRSABits)
		}
		algs = rsaAlgs
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			algs = ecAlgs[0:1]
		case elliptic.P384():
			algs = ecAlgs[1:2]
		case elliptic.P521():
			algs = ecAlgs[2:3]
		default:
			return publicKey{}, fmt.Errorf("ECDSA curve %s is not supported; use P-256, P-384 or P-521", k.Curve.Params().Name)
		}
	case ed25519.PublicKey:
		if len(k) != ed25519.PublicKeySize {
			return publicKey{}, fmt.Errorf("Ed25519 key of %d bytes is invalid", len(k))
		}
		algs = ed25519Algs
	default:
		return publicKey{}, fmt.Errorf("key type %T is not supported", key)
	}
	if declaredAlg != "" {
		if !slices.Contains(algs, declaredAlg) {
			return publicKey{}, fmt.Errorf("alg %s does not fit the key's type", declaredAlg)
		}
		algs = []string{declaredAlg}
	}
	return publicKey{kid: kid, key: key, algs: algs}, nil
}

// keyIndex answers "which keys may verify this token" without locking or
// allocating. It is immutable; a JWKS refresh builds a new one. Values in the
// maps are ready to hand to the jwt parser: one key, or a
// jwt.VerificationKeySet when several fit, boxed once here.
type keyIndex struct {
	byKID   map[string]publicKey // keys with a kid (JWKS keys)
	all     map[string]any       // alg -> every key that fits it, the HMAC secret for HS*
	unnamed map[string]any       // alg -> keys without a kid, tried when a kid matches nothing
}

func newKeyIndex(secret []byte, keys ...[]publicKey) *keyIndex {
	idx := &keyIndex{byKID: map[string]publicKey{}}
	all := map[string][]jwt.VerificationKey{}
	unnamed := map[string][]jwt.VerificationKey{}
	if secret != nil {
		for _, alg := range hmacAlgs {
			all[alg] = []jwt.VerificationKey{secret}
		}
	}
	for _, set := range keys {
		for _, k := range set {
			if k.kid != "" {
				if _, dup := idx.byKID[k.kid]; dup {
					continue // the first key published under a kid wins
				}
				idx.byKID[k.kid] = k
			}
			for _, alg := range k.algs {
				all[alg] = append(all[alg], k.key)
				if k.kid == "" {
					unnamed[alg] = append(unnamed[alg], k.key)
				}
			}
		}
	}
	idx.all = boxKeys(all)
	idx.unnamed = boxKeys(unnamed)
	return idx
}

func boxKeys(m map[string][]jwt.VerificationKey) map[string]any {
	out := make(map[string]any, len(m))
	for alg, keys := range m {
		if len(keys) == 1 {
			out[alg] = keys[0]
		} else {
			out[alg] = jwt.VerificationKeySet{Keys: keys}
		}
	}
	return out
}

// acceptedAlgs lists the algorithms the configured sources can verify. A JWKS
// may publish any kind of public key at any time, so it opens every
// asymmetric algorithm.
func acceptedAlgs(secret []byte, static []publicKey, jwks bool) []string {
	var algs []string
	if secret != nil {
		algs = append(algs, hmacAlgs...)
	}
	if jwks {
		algs = append(algs, rsaAlgs...)
		algs = append(algs, ecAlgs...)
		return append(algs, ed25519Algs...)
	}
	for _, k := range static {
		for _, alg := range k.algs {
			if !slices.Contains(algs, alg) {
				algs = append(algs, alg)
			}
		}
	}
	return algs
}

func isHMAC(alg string) bool { return slices.Contains(hmacAlgs, alg) }
