// Package jwtauth verifies bearer tokens: JWS-signed JWTs checked against an
// HMAC secret, public keys from a PEM file and keys published at a JWKS URL.
// It implements application.TokenVerifier.
//
// The algorithm is pinned to the type of key: HS256/384/512 are checked only
// against the HMAC secret, RS* and PS* only against RSA keys, ES256/384/512
// only against ECDSA keys on P-256/P-384/P-521, EdDSA only against Ed25519
// keys, and "none" never. A token whose header names a kid is checked against
// the JWKS key with that kid; a kid that matches no key falls back to the keys
// that carry no kid (the PEM keys), and a token without a kid is tried against
// every key whose type fits its algorithm.
//
// JWKS keys are fetched by github.com/MicahParks/jwkset (keyfunc's storage
// layer, which also parses the JWKs), cached, and fetched again every
// Config.JWKSRefresh. A kid no key has causes at most one extra fetch a
// minute, and a token never waits for that limit. When the endpoint fails,
// the keys fetched before stay in use; the failure is logged and counted in
// plantstore_jwks_refresh_failures_total.
//
// A token must carry exp; nbf and iat are honoured with a leeway (30 s by
// default); iss and aud are checked when configured. sub becomes the
// principal's subject and may be empty. Scopes come from the space-separated
// scope claim and from scp (an array of strings or a space-separated string).
//
// Every refusal is an *application.TokenError. Its Reason is one of a closed
// set of words that can serve as a metric label: malformed, too_large,
// algorithm, unknown_key, signature, expired, not_yet_valid, issuer, audience,
// claims. Its Description is short ASCII text, safe to send to a client.
package jwtauth
