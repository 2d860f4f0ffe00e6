package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// feedCursors walks the preloaded event feed of the service at base, a
// page of listLimit events at a time, and returns the cursors of its Links
// whose pages are full: the cursors an events cell draws from. The cursors
// stay the client's opaque values; the service made them.
func (b *bench) feedCursors(ctx context.Context, base string) ([]string, error) {
	var cursors []string
	path, prev := fmt.Sprintf("/events?limit=%d", listLimit), ""
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+b.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		var events []json.RawMessage
		if err := json.Unmarshal(body, &events); resp.StatusCode != http.StatusOK || err != nil {
			return nil, fmt.Errorf("GET %s: %s %.200s", path, resp.Status, body)
		}
		if len(events) < listLimit {
			break
		}
		if prev != "" {
			cursors = append(cursors, prev)
		}
		link, ok := strings.CutSuffix(resp.Header.Get("Link"), `>; rel="next"`)
		_, cursor, found := strings.Cut(link, "&after=")
		if !ok || !found {
			return nil, fmt.Errorf("GET %s: Link %q", path, resp.Header.Get("Link"))
		}
		path, prev = link[1:], cursor
	}
	if len(cursors) == 0 {
		return nil, errors.New("the event feed has no full page to measure: does the build keep events?")
	}
	progress("walked the event feed: %d pages", len(cursors))
	return cursors, nil
}
