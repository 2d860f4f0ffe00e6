// Package httpapi is the inbound HTTP adapter: the chi router that serves
// POST /plants, GET /openapi.yaml and the API reference page GET /docs, the
// strict JSON decoding of requests, bearer authentication through the
// application's TokenVerifier port, and the one mapper that turns domain and
// application errors into Error bodies.
package httpapi
