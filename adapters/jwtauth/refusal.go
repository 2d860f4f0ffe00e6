package jwtauth

import "github.com/plantstore/plantstore/application"

// refusal is why a token was refused: a reason from the closed set named in
// the package comment and a description a client may see. Descriptions are
// plain ASCII with no quotes or backslashes so that they fit in an RFC 6750
// error_description without escaping.
type refusal struct {
	reason      string
	description string
}

var (
	refusedMalformed   = refusal{"malformed", "the token is malformed"}
	refusedTooLarge    = refusal{"too_large", "the token is too large"}
	refusedAlgorithm   = refusal{"algorithm", "the token algorithm is not accepted"}
	refusedUnknownKey  = refusal{"unknown_key", "no known key fits the token"}
	refusedSignature   = refusal{"signature", "the token signature is invalid"}
	refusedExpired     = refusal{"expired", "the token has expired"}
	refusedNotYetValid = refusal{"not_yet_valid", "the token is not valid yet"}
	refusedIssuer      = refusal{"issuer", "the token issuer is not accepted"}
	refusedAudience    = refusal{"audience", "the token audience is not accepted"}
	refusedNoExpiry    = refusal{"claims", "the token has no expiration time"}
	refusedClaims      = refusal{"claims", "the token claims are invalid"}
)

// err returns a fresh error so that callers cannot alter a shared value.
func (r refusal) err() error {
	return &application.TokenError{Reason: r.reason, Description: r.description}
}
