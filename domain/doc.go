// Package domain holds the plant rules: value types whose constructors refuse
// bad values, the Plant entity built only from them, and the domain's errors.
// It imports the standard library only.
package domain
