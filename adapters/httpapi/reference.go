package httpapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/swaggest/swgui/v5/static"
)

// The API reference page, GET /docs, is Swagger UI showing the document
// served at GET /openapi.yaml. Swagger UI's own files come from
// github.com/swaggest/swgui, which embeds a released build of it; the page,
// its start-up script and its style sheet are in reference/. Every file is
// served by this listener, so the page works with no other host reachable.

// referenceCSP lets the page load and run files from this service only, and
// lets its scripts call only this service. Swagger UI sets inline styles and
// uses data: images in its style sheet; neither comes from another origin.
const referenceCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// immutable is the Cache-Control of an asset asked for by the page's
// versioned URL: a new build changes the version, hence the URL.
const immutable = "public, max-age=31536000, immutable"

//go:embed reference
var referenceFiles embed.FS

// referenceAsset is one file of the page, served at /docs/<name>.
type referenceAsset struct {
	name        string
	contentType string
	body        []byte
	gzipped     bool // body is gzip; sent as it is to clients that accept gzip
}

// referencePage is the page and its assets, built once per process.
type referencePage struct {
	// version is a digest of every asset; the page asks for each asset with
	// it (?v=), so that browsers may cache assets for good.
	version string
	html    []byte
	assets  []referenceAsset
}

// loadReference builds the page on first use.
var loadReference = sync.OnceValues(buildReference)

// buildReference reads the page's files and puts the version into the
// page's links.
func buildReference() (*referencePage, error) {
	sources := []struct {
		fsys              fs.FS
		file, name, ctype string
	}{
		{static.FS, "swagger-ui-bundle.js.gz", "swagger-ui-bundle.js", "text/javascript; charset=utf-8"},
		{static.FS, "swagger-ui.css.gz", "swagger-ui.css", "text/css; charset=utf-8"},
		{static.FS, "favicon-32x32.png", "favicon-32x32.png", "image/png"},
		{static.FS, "favicon-16x16.png", "favicon-16x16.png", "image/png"},
		{referenceFiles, "reference/reference.js", "reference.js", "text/javascript; charset=utf-8"},
		{referenceFiles, "reference/reference.css", "reference.css", "text/css; charset=utf-8"},
	}
	p := &referencePage{}
	digest := sha256.New()
	for _, s := range sources {
		b, err := fs.ReadFile(s.fsys, s.file)
		if err != nil {
			return nil, fmt.Errorf("httpapi: API reference: %w", err)
		}
		digest.Write(b)
		p.assets = append(p.assets, referenceAsset{
			name: s.name, contentType: s.ctype, body: b, gzipped: strings.HasSuffix(s.file, ".gz"),
		})
	}
	p.version = hex.EncodeToString(digest.Sum(nil))[:16]
	// A plain replacement rather than html/template: the version is hex, and
	// html/template's reflection would keep every method of the binary's
	// types alive (about 2 MiB more binary).
	page, err := fs.ReadFile(referenceFiles, "reference/index.html")
	if err != nil {
		return nil, fmt.Errorf("httpapi: API reference: %w", err)
	}
	p.html = bytes.ReplaceAll(page, []byte("{{version}}"), []byte(p.version))
	return p, nil
}

// referenceRoutes adds GET (and HEAD) /docs and one route per asset, so that any
// other path under /docs is the router's 404 like every unknown path, and
// the access log and metrics name each file.
func (a *API) referenceRoutes(get func(string, http.HandlerFunc)) {
	p := a.reference
	get("/docs", func(w http.ResponseWriter, _ *http.Request) {
		setReferenceHeaders(w.Header(), "text/html; charset=utf-8", "no-cache")
		w.Header().Set("Content-Length", strconv.Itoa(len(p.html)))
		_, _ = w.Write(p.html)
	})
	for i := range p.assets {
		asset := &p.assets[i]
		get("/docs/"+asset.name, func(w http.ResponseWriter, r *http.Request) {
			a.serveAsset(w, r, asset, r.URL.Query().Get("v") == p.version)
		})
	}
}

// serveAsset writes one asset, gzip-compressed when it is stored so and the
// client accepts gzip, else as it is. Only a request with the current
// version may be cached, so an old page never pins an asset.
func (a *API) serveAsset(w http.ResponseWriter, r *http.Request, asset *referenceAsset, current bool) {
	var body io.Reader = bytes.NewReader(asset.body)
	compressed := asset.gzipped && acceptsGzip(r.Header.Values("Accept-Encoding"))
	if asset.gzipped && !compressed {
		zr, err := gzip.NewReader(body)
		if err != nil {
			a.writeError(w, r, fmt.Errorf("API reference asset %s: %w", asset.name, err))
			return
		}
		body = zr
	}
	h := w.Header()
	cache := "no-cache"
	if current {
		cache = immutable
	}
	setReferenceHeaders(h, asset.contentType, cache)
	if asset.gzipped {
		h.Set("Vary", "Accept-Encoding")
	}
	if compressed {
		h.Set("Content-Encoding", "gzip")
	}
	if compressed || !asset.gzipped {
		h.Set("Content-Length", strconv.Itoa(len(asset.body)))
	}
	_, _ = io.Copy(w, body)
}

// setReferenceHeaders sets what every response of the page carries.
func setReferenceHeaders(h http.Header, contentType, cacheControl string) {
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", cacheControl)
	h.Set("Content-Security-Policy", referenceCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// acceptsGzip reports whether Accept-Encoding values allow gzip (RFC 9110
// section 12.5.3): gzip listed with a q above 0, or else * listed so.
func acceptsGzip(values []string) bool {
	gzipQ, anyQ := -1.0, -1.0
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(item, ";")
			coding = strings.TrimSpace(coding)
			switch {
			case strings.EqualFold(coding, "gzip"):
				gzipQ = quality(params)
			case coding == "*":
				anyQ = quality(params)
			}
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return anyQ > 0
}

// quality reads the q parameter of an Accept-Encoding item: 1 when absent,
// 0 when unreadable, so that a garbled item never turns compression on.
func quality(params string) float64 {
	for _, p := range strings.Split(params, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(name), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil || q < 0 {
				return 0
			}
			return q
		}
	}
	return 1
}
