// Package docs holds the service's published documentation: its OpenAPI
// document, embedded so that the binary serves exactly the reviewed file.
package docs

import _ "embed"

// OpenAPI is the service's OpenAPI document (YAML), served at GET /openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
