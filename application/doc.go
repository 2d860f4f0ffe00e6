// Package application holds the use cases and the ports they need. It imports
// the domain only; adapters plug in behind the ports.
package application
